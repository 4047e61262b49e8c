// swift-tools-version:6.1

import PackageDescription

// A release `credstore` (and `credstore-tls`) is a static executable on Linux however it is built,
// stripped as it is linked; see the `credstore` target.
let staticExecutable: (swift: [SwiftSetting], linker: [LinkerSetting]) = (
    [.unsafeFlags(["-static-executable"], .when(platforms: [.linux], configuration: .release))],
    [.unsafeFlags(["-static-executable", "-Xlinker", "--strip-all"], .when(platforms: [.linux], configuration: .release))]
)

let package = Package(
    name: "credstore",
    platforms: [.macOS(.v15)],
    products: [
        // Core and Challenges are re-exported by CredentialStore; listed so that their documentation
        // is built with it.
        .library(name: "CredentialStore", targets: ["CredentialStore", "CredentialStoreCore", "CredentialStoreChallenges"]),
        .library(name: "CredentialStoreNetworking", targets: ["CredentialStoreNetworking"]),
        // The TLS half of the keychain in products of their own, so that the core product keeps its
        // small dependency set: evaluation and PEM on swift-certificates, the bridge on swift-nio-ssl.
        .library(name: "CredentialStoreTLS", targets: ["CredentialStoreTLS"]),
        .library(name: "CredentialStoreNIOSSL", targets: ["CredentialStoreNIOSSL"]),
        .executable(name: "credstore", targets: ["credstore"]),
        // `credstore` with the TLS libraries linked, which `credstore` runs for the TLS commands
        // (docs/architecture.md, "The TLS half"): scripts/install and the .deb install both.
        .executable(name: "credstore-tls", targets: ["credstore-tls"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // For CredentialStoreTLS and CredentialStoreNIOSSL only; the CredentialStore product uses none.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The oldest release tested: .ci/new-user builds a package that pins 2.101.2 beside this one.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // `swift package generate-documentation`, which .ci/docs runs; no target depends on it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libsodium from Debian's libsodium-dev; only the crypto layer imports it.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // prctl(2) for the CLI's hardening: variadic in C, so Swift needs a fixed-arity wrapper.
        .systemLibrary(name: "CLinux"),
        // The schema history, compiled into the library so that a copied binary needs no resources.
        .target(
            name: "CredentialStoreMigrations",
            path: "migrations"
        ),
        // The library in layers, each seeing only the ones below it (docs/architecture.md, "Targets";
        // .ci/check-layers proves that an import the other way fails to build).
        // Layer 0: the public model, its validation, the errors, byte coding.
        .target(name: "CredentialStoreCore"),
        // Layer 1: libsodium behind Swift types; the only target that imports CSodium.
        .target(
            name: "CredentialStoreCrypto",
            dependencies: ["CredentialStoreCore", "CSodium", .target(name: "CLinux", condition: .when(platforms: [.linux]))]
        ),
        // Layer 2: SQLite through GRDB; sealed rows in, sealed rows out, no policy.
        .target(
            name: "CredentialStorePersistence",
            dependencies: [
                "CredentialStoreCore",
                "CredentialStoreCrypto",
                "CredentialStoreMigrations",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        // Layer 2: parsing HTTP challenges and computing Basic and Digest answers.
        .target(
            name: "CredentialStoreChallenges",
            dependencies: ["CredentialStoreCore", "CredentialStoreCrypto"]
        ),
        // Layer 3: the store: storage, sync, change notifications.
        .target(
            name: "CredentialStore",
            dependencies: [
                "CredentialStoreCore",
                "CredentialStoreCrypto",
                "CredentialStorePersistence",
                "CredentialStoreChallenges",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "CredentialStoreNetworking",
            dependencies: ["CredentialStore", .product(name: "Logging", package: "swift-log")]
        ),
        // Above the core, beside the store (it must not know the store): client identities from PEM,
        // certificate summaries, public-key pins and the evaluation of a server's chain.
        .target(
            name: "CredentialStoreTLS",
            dependencies: [
                "CredentialStoreCore",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The bridge from the store to swift-nio-ssl: PKCS #12 import, a client TLSConfiguration with
        // the store's identity for a host, and pipeline handlers that apply its ServerTrust through
        // CredentialStoreTLS's evaluator.
        .target(
            name: "CredentialStoreNIOSSL",
            dependencies: [
                "CredentialStoreCore",
                "CredentialStoreTLS",
                "CredentialStore",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // To look into a PKCS #12 bundle before swift-nio-ssl opens it.
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The files and lines other programs write, read without a terminal, TLS or the command
        // line: netrc, git's credential protocol, CSV and the password managers' exports. Beside the
        // CLI rather than in it, so that the fuzz targets reach these parsers without building
        // swift-nio-ssl and swift-crypto (two copies of BoringSSL) under AddressSanitizer.
        .target(
            name: "CredentialStoreFormats",
            dependencies: ["CredentialStore"]
        ),
        .target(
            name: "CredentialStoreCLI",
            dependencies: [
                "CredentialStore",
                "CredentialStoreFormats",
                .target(name: "CLinux", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // To give the library a quiet logger: swift-log's default prints info lines on stderr.
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "credstore",
            dependencies: [
                "CredentialStoreCLI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // A release `credstore` is a static executable on Linux however it is built, as the README
            // builds it: linked against the toolchain's shared libraries, the dynamic loader binds some
            // 11,000 symbols across 20 libraries (Foundation's with ICU) on every run, and a `get` took
            // three times as long (docs/performance.md, "Start-up"). Unsafe flags are accepted here
            // because a package that depends on this one builds only the library products. It is
            // stripped as it is linked (a third of its size is symbols), so the README's build and
            // scripts/install give the same bytes.
            swiftSettings: staticExecutable.swift,
            linkerSettings: staticExecutable.linker
        ),
        // The same tool with CredentialStoreTLS and CredentialStoreNIOSSL behind the TLS commands:
        // `identity`, `pin` and `curl-args` read and write PEM and PKCS #12, summarise certificates
        // and fetch a server's chain through swift-certificates and swift-nio-ssl, which bring
        // swift-nio and two copies of BoringSSL. Built and linked as `credstore` is.
        .executableTarget(
            name: "credstore-tls",
            dependencies: [
                "CredentialStoreCLI",
                "CredentialStore",
                "CredentialStoreTLS",
                "CredentialStoreNIOSSL",
            ],
            swiftSettings: staticExecutable.swift,
            linkerSettings: staticExecutable.linker
        ),
        // A tiny second process for the cross-process tests (notifications, concurrent writers).
        .executableTarget(
            name: "credstore-test-helper",
            dependencies: ["CredentialStore", "CredentialStoreNetworking"],
            path: "Tests/Helper"
        ),
        // The seedable generator the tests and the harnesses share, so every run replays from its seed.
        .target(
            name: "SeededRandom",
            path: "Harnesses/SeededRandom"
        ),
        // Fault injection, load and corruption trials (`swift run -c release credstore-torture …`),
        // the harnesses behind docs/reliability.md.
        .executableTarget(
            name: "credstore-torture",
            dependencies: ["CredentialStore", "SeededRandom"],
            path: "Harnesses/credstore-torture"
        ),
        // libFuzzer targets for the parsers that read untrusted input: bundles, challenge headers,
        // URLs, netrc, git's credential protocol and the importers (CredentialStoreFormats, whose
        // parsers are `package`). Without `-sanitize=fuzzer` it replays a corpus; see docs/reliability.md.
        .executableTarget(
            name: "credstore-fuzz",
            dependencies: ["CredentialStore", "CredentialStoreFormats", "SeededRandom"],
            path: "Harnesses/credstore-fuzz"
        ),
        // What the test targets share: temporary stores, the one process runner, the local servers
        // (lighttpd, tinyproxy, and the Python ones), and hand-made sync bundles.
        .target(
            name: "CredentialStoreTestSupport",
            dependencies: ["CredentialStore", "CredentialStoreCrypto", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/TestSupport",
            // The Python servers the tests start; found through #filePath, not built.
            exclude: ["Servers"]
        ),
        .testTarget(
            name: "CredentialStoreTests",
            dependencies: [
                "CredentialStore",
                "CredentialStoreCore",
                "CredentialStoreCrypto",
                "CredentialStorePersistence",
                "CredentialStoreChallenges",
                "CredentialStoreMigrations",
                "CredentialStoreTestSupport",
                "credstore-test-helper",
                "credstore-fuzz",
                "SeededRandom",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "CredentialStoreNetworkingTests",
            // The helper fetches through a proxy in a process of its own: corelibs takes the proxy
            // only from the environment, which must not change under the other tests.
            dependencies: [
                "CredentialStoreNetworking", "CredentialStoreTestSupport", "credstore-test-helper",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CredentialStoreCLITests",
            dependencies: ["CredentialStoreCLI", "CredentialStoreFormats", "CredentialStore", "CredentialStoreTestSupport", "credstore", "credstore-tls"]
        ),
        .testTarget(
            name: "CredentialStoreTLSTests",
            dependencies: [
                "CredentialStore",
                "CredentialStoreTLS",
                "CredentialStoreNIOSSL",
                "CredentialStoreCore",
                "CredentialStoreTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The same strictness for every target, as swift-log does it.
for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
