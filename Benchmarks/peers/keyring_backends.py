"""Python keyring's two encrypted-file backends, told their file and master password by the
environment instead of asking at a terminal, so that the in-process driver and the
`python -m keyring -p Benchmarks/peers -b keyring_backends.NAME` command line open one store:

  CREDSTORE_PEER_KEYRING_FILE      the keyring file
  CREDSTORE_PEER_KEYRING_PASSWORD  its master password

Everything else is the stock backend's, unlocking included: the master password is checked by
decrypting the file's "password reference" entry, one key derivation, as a user's unlock is.
"""
import os

from keyrings.alt.file import EncryptedKeyring
from keyrings.cryptfile.cryptfile import CryptFileKeyring

REFERENCE = ("keyring-setting", "password reference")
REFERENCE_VALUE = "password reference value"


class _Unattended:
    def __init__(self):
        super().__init__()
        self.file_path = os.environ["CREDSTORE_PEER_KEYRING_FILE"]

    def _get_new_password(self):
        return os.environ["CREDSTORE_PEER_KEYRING_PASSWORD"]

    def _unlock(self):
        self._hold(os.environ["CREDSTORE_PEER_KEYRING_PASSWORD"])
        if self.get_password(*REFERENCE) != REFERENCE_VALUE:
            self._hold(None)
            raise ValueError("Incorrect Password")


class CryptFile(_Unattended, CryptFileKeyring):
    """keyrings.cryptfile as shipped: Argon2id (t = 15, m = 64 MiB, p = 2) per entry, AES-128-GCM."""

    def _hold(self, key):
        # keyring_key is a property here whose setter unlocks again; the field is what it guards.
        self._keyring_key = key


class AltEncrypted(_Unattended, EncryptedKeyring):
    """keyrings.alt's EncryptedKeyring as shipped: PBKDF2 per entry, AES-256-CFB."""

    def _hold(self, key):
        # keyring_key is a non-data property here: an instance attribute of that name shadows it.
        if key is None:
            self.__dict__.pop("keyring_key", None)
        else:
            self.keyring_key = key
