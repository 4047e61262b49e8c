// swift-tools-version:6.1

// A new user's package, outside credstore: it depends on credstore by path, as the README shows.
// A path dependency is named after its folder, so this expects credstore checked out (or linked)
// as `../credstore`; `.ci/new-user` copies this folder beside such a link, builds it and runs
// `NewUserPackageTests` against the result.
import PackageDescription

let package = Package(
    name: "NewUser",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../credstore"),
        // An app that pins another release of a package credstore also uses than the one
        // credstore's own build resolves (2.101.3): the two must resolve together.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "NewUser",
            dependencies: [.product(name: "CredentialStoreNetworking", package: "credstore")]
        ),
        // What everyday use must never lose, through the library alone.
        .executableTarget(
            name: "Everyday",
            dependencies: [.product(name: "CredentialStore", package: "credstore")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
