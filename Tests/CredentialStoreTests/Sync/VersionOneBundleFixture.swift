import Foundation

/// A bundle of format version 1, written by credstore before bundles carried credential details
/// (commit d55ce71), so that a store of every later version is shown to still read it.
///
/// Made with that commit's CLI in an empty folder:
///
///     export CREDSTORE_STORE=$PWD/store.db
///     printf 'v1-alice-password\n' | credstore add https://api.example.com --realm API --user alice --persistence synchronizable
///     printf 'v1-bob-password\n'   | credstore add https://api.example.com --realm API --user bob --persistence synchronizable
///     printf 'v1-carol-password\n' | credstore add https://git.example.org --user carol --persistence synchronizable
///     printf 'v1-dave-password\n'  | credstore add https://git.example.org --user dave --persistence synchronizable --default
///     credstore remove https://api.example.com --realm API --user bob --synchronizable
///     CREDSTORE_BUNDLE_PASSPHRASE='version one fixture' credstore export v1.csbundle
///     base64 -w 100 v1.csbundle
///
/// It holds alice (the default of api.example.com, realm API), a tombstone for bob there, and
/// carol and dave at git.example.org (dave the default). Written at 2026-11-27T01:37Z: a test
/// importing it runs its store's clock just after that, or the 180-day window would refuse it.
enum VersionOneBundle {
    static let passphrase = "version one fixture"
    /// The bundle's creation, in milliseconds since 1970, rounded up to the minute.
    static let writtenAround: Int64 = 1_795_743_480_000
    static let base64 = """
        Q1NCVU5ETEUBARItBpeCq4m8dts+6xVgfXsAAAAAAAAABAAAAAAgAAAALDpXTR2+Vk8Y2k2eFwtmF4otpEK+P1CCAAAAWpMiu9+y
        HrdQBi9TTL/0aY7Mto3BZfMWZJkGBcd/iAgND34dmGUtdnh79F2+CKD03iA/RKMe/NNt5MV1f2+oSGem/+80DvL9UG7Tx/1mTktH
        nYZnNpVvNpJgIAAAAlOWDFTMHuvfRyphHf9gP1znCTjPubwGPQsRGEgrgcEXe1y04AOnuiq4ICTDbbswwE2t13cTBvwTNorJDd2L
        rt7vp/dXgmDZMDncTyjLyili9sNGfCm1ogPUxe/RIEjD/ICeNXN7zINmpM1fXh2KXwE6V+qGt6dP6OgeyfQFt75rrmdQlyzaPWO0
        6BM1egWBMFNxbVCwUTCAITfj8BwkESXAqBWowbNOCkyXNvDwfNQ7APU9BGrn5BOoN1Q3eETRylN3SRA4Pyax80VxSOU+AAbV5Lz/
        OCOgX7rm/5nY95nCtTVQU9brLT8hoV2OGm1xbVhyaG3p0g9lKQAKBzftG4kVH+DkPH5zZpOWSy/Wyfc3kRreNtwDO4LqjzZvoPma
        vuIgEl8luUs9hOHMVNS24cJqDOh0YArp9EFkjj8Bad89ZlnfwkXPa6YmwJ45ECNP+kSGxyWyvgTyk52+3++Dc10+IHi71CHKeDI6
        Gu6RFUhBfRiIDDXfSVVzvP17WKbA5skGuJRP9ROmNqvymX28tFDUBw2KWqhvCL2uLIjQ1d/D3i7GcGhPV6LqwvEEkG9O7gf5JlLE
        DV5MEmL/t+sLivDGYIbLpP9RuFVi9bgcqe9P7gG5mA5aZ7hukPysF1r9NTQpF8kUzmbeJaxUAii7R6mJ8wnJ1NUvjYfTZdZX2rZ7
        vpy0uLvXtFxiYZLvqagOcOb9mSRWibaRocG55dU+sEfY656EEbV0YxjSO88BhuYwmA9WTsMHoOImGL8nB5OErHU2ejfY1HxPKMVj
        ayf+fzmM++NfAAABFKfrG8RtCsAA0EqyIdloWOM4ukpT6Oj4Wuhvz8+Ey7Z4lu+Zga2zJvgH/xb8aNGxog7szd8mwdwyUBkmH0S/
        cDylI7Jyyh9Cf0tRvoHEmg0aU4qZt5PWldp/7HvBSoGkrB5pIOKcW8Gg+XD/VhG1HqggWv1gdcxNFTYbyQVmL5JvxJgEsoN6QVnn
        wRlTb0Rmxl6tWoJiXEi+Z/xkAhgpCvKuEGYTg+1CmnXPLGwUHcmzOwqvSNVC+uqdT3ta4GnmF8VNROA72Zuhx4udCvSw99+qCXH4
        /KGqxtjXtapMjqp5AVBi3IyCG1rWIY0TCs3xbEEwAcnvZvRC8juWxdrEBHtZxeRYzOOnCNXYI/lpjsyEqYscBgAAABLwJJW2UoBb
        CiTO3J7S2q/pZ68=
        """

    static var bytes: [UInt8] {
        [UInt8](Data(base64Encoded: base64.replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: " ", with: ""))!)
    }
}
