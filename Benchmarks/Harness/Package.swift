// swift-tools-version:6.1

// The in-process benchmark harness, a package outside credstore's own that depends on the
// `CredentialStore` product by path, exactly as an app would, and is built the way an app builds
// it: `swift build -c release`, no static executable, no unsafe flags (Benchmarks/run does this).
// It sees the public API only.

import Foundation
import PackageDescription

// credstore two folders up, or where CREDSTORE_PACKAGE_PATH says: CI builds the harness through
// the link its other outside packages use, so that they share one build (.ci/outside-packages.sh).
// A path dependency is named after its folder, which is whatever the clone is called: the
// product's package argument is that name.
let dependencyPath = Context.environment["CREDSTORE_PACKAGE_PATH"] ?? "../.."
let root = URL(fileURLWithPath: dependencyPath, relativeTo: URL(fileURLWithPath: Context.packageDirectory + "/")).standardizedFileURL

let package = Package(
    name: "credstore-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: dependencyPath),
    ],
    targets: [
        .executableTarget(
            name: "credstore-bench",
            dependencies: [.product(name: "CredentialStore", package: root.lastPathComponent)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
