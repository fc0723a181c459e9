// swift-tools-version:6.1
import Foundation
import PackageDescription

/// Whether the `Postgres` trait is on by default: always on Linux (Debian's
/// libpq-dev, installed by scripts/setup); on a Mac only where libpq's
/// header is installed (Homebrew's, or Postgres.app's), so that a fresh Mac
/// with Xcode alone builds, without PostgreSQL stores. `FORAGE_POSTGRES=1`
/// or `=0` in the environment decides instead; `--traits Postgres` and
/// `--disable-default-traits` still override either way.
let postgresByDefault: Bool = {
  switch ProcessInfo.processInfo.environment["FORAGE_POSTGRES"] {
  case "1": return true
  case "0": return false
  default: break
  }
  #if os(Linux)
  return true
  #else
  let headers = [
    "/opt/homebrew/opt/libpq/include/libpq-fe.h", "/usr/local/opt/libpq/include/libpq-fe.h",
    "/opt/homebrew/include/libpq-fe.h", "/usr/local/include/libpq-fe.h",
    "/Applications/Postgres.app/Contents/Versions/latest/include/libpq-fe.h",
  ]
  return headers.contains { FileManager.default.fileExists(atPath: $0) }
  #endif
}()

/// Forage: keeps web data fresh in the background.
///
/// See `README.md` for the two commands that set everything up, its module
/// table for what each target is, and `docs/` for the design: one folder per
/// target under `Sources/`, tests beside their target's name under `Tests/`.
let package = Package(
  name: "Forage",
  platforms: [.macOS(.v14), .iOS(.v17)],
  products: [
    .library(name: "Forage", targets: ["Forage"]),
    .library(name: "ForageHTML", targets: ["ForageHTML"]),
    .library(name: "ForageHTTP", targets: ["ForageHTTP"]),
    .library(name: "ForageStore", targets: ["ForageStore"]),
    .library(name: "ForageScheduler", targets: ["ForageScheduler"]),
    .library(name: "ForageTestSupport", targets: ["ForageTestSupport"]),
    .library(name: "ForageBackgroundTasks", targets: ["ForageBackgroundTasks"]),
    .executable(name: "forage", targets: ["ForageCLI"]),
    .executable(name: "forage-bench", targets: ["ForageBench"]),
    .library(name: "ForagePostgres", targets: ["ForagePostgres"]),
  ],
  // `Postgres` (on by default where libpq is installed: see
  // `postgresByDefault`) builds ForagePostgres over libpq and lets the CLI
  // open `postgres://` stores; `--disable-default-traits` builds the rest
  // without libpq (an iOS app that only wants the library).
  traits: [
    .trait(name: "Postgres", description: "PostgreSQL stores through libpq (Debian: libpq-dev; macOS: brew install libpq)."),
    .default(enabledTraits: postgresByDefault ? ["Postgres"] : []),
  ],
  targets: [
    // C libraries from the system (Debian: libcurl4-openssl-dev, libsqlite3-dev, libpq-dev).
    .systemLibrary(
      name: "CCurl", pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
    .systemLibrary(
      name: "CLibPQ", pkgConfig: "libpq",
      providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),

    // The small pieces several independent targets share: the lock, the
    // seeded generator (SplitMix64), the stable hash (FNV-1a), duration text,
    // SHA-256 and HMAC, inflate, JSON and terminal text, UTF-8 keys and a
    // thread executor. ForageURL, ForageHTTP, ForageScheduler, the stores,
    // ForageTestSupport and the engine need them and depend on nothing of each
    // other's, so each piece gets one home below them all. Its API is
    // `package`, not `public`: it is no product and no part of the library's
    // API. README.md's module table lists every target here with its
    // dependencies (a test compares them).
    .target(name: "ForageSupport"),

    // Pure Swift building blocks.
    .target(name: "ForageHTML"),
    .target(name: "ForageURL", dependencies: ["ForageSupport"]),
    .target(name: "ForageScheduler", dependencies: ["ForageSupport"]),
    .target(name: "ForageTestSupport", dependencies: ["ForageSupport"]),

    .target(
      name: "ForageHTTP",
      dependencies: [
        "ForageURL", "ForageSupport",
        .target(name: "CCurl", condition: .when(platforms: [.linux])),
      ]),
    .target(name: "ForageStore", dependencies: ["CSQLite", "ForageScheduler", "ForageSupport"]),
    .target(
      name: "ForagePostgres",
      dependencies: [
        "ForageStore", "ForageSupport", .target(name: "CLibPQ", condition: .when(traits: ["Postgres"])),
      ]),
    .target(
      name: "Forage",
      dependencies: ["ForageHTML", "ForageURL", "ForageHTTP", "ForageStore", "ForageScheduler", "ForageSupport"]),

    // The Apple adapter: Forage under BGTaskScheduler, UserNotifications and a
    // background URLSession. On Apple platforms it imports the real
    // frameworks; on Linux it compiles against AppleFrameworksStandIn, a
    // test-only module declaring the subset of Apple's API it uses, linked
    // on Linux only, so it never ships in an Apple build.
    .target(name: "AppleFrameworksStandIn", dependencies: ["ForageSupport"]),
    .target(
      name: "ForageBackgroundTasks",
      dependencies: [
        "Forage", "ForageHTTP", "ForageScheduler", "ForageStore", "ForageSupport",
        .target(name: "AppleFrameworksStandIn", condition: .when(platforms: [.linux])),
      ]),

    .executableTarget(
      name: "ForageCLI",
      dependencies: [
        "Forage", "ForageHTML", "ForageHTTP", "ForageScheduler", "ForageStore", "ForageURL", "ForageTestSupport",
        "ForageSupport", .target(name: "ForagePostgres", condition: .when(traits: ["Postgres"])),
      ]),
    // A test program: record-sink delivery killed between apply and cursor
    // (Tests/ForageCLITests/SinkDeliveryKillTests.swift runs it).
    .executableTarget(
      name: "ForageSinkProbe",
      dependencies: [
        "Forage", "ForageStore", .target(name: "ForagePostgres", condition: .when(traits: ["Postgres"])),
      ]),
    .executableTarget(
      name: "ForageBench",
      dependencies: [
        "Forage", "ForageHTML", "ForageHTTP", "ForageScheduler", "ForageURL", "ForageTestSupport", "ForageSupport",
        "ForageStore", .target(name: "ForagePostgres", condition: .when(traits: ["Postgres"])),
      ]),

    .testTarget(name: "ForageHTMLTests", dependencies: ["ForageHTML", "ForageSupport"]),
    .testTarget(name: "ForageURLTests", dependencies: ["ForageURL"]),
    .testTarget(name: "ForageHTTPTests", dependencies: ["ForageHTTP", "ForageURL", "ForageTestSupport", "ForageSupport"]),
    .testTarget(
      name: "ForageStoreTests",
      dependencies: [
        "ForageStore", "CSQLite", .target(name: "ForagePostgres", condition: .when(traits: ["Postgres"])),
      ]),
    .testTarget(name: "ForageSchedulerTests", dependencies: ["ForageScheduler", "ForageSupport"]),
    .testTarget(name: "ForageSupportTests", dependencies: ["ForageSupport"]),
    .testTarget(
      name: "ForageTests",
      dependencies: [
        "Forage", "ForageHTML", "ForageHTTP", "ForageStore", "ForageURL", "ForageScheduler", "ForageTestSupport",
        "ForageSupport",
      ]),
    .testTarget(name: "ForageTestSupportTests", dependencies: ["ForageTestSupport"]),
    .testTarget(
      name: "ForageBackgroundTasksTests",
      dependencies: [
        "ForageBackgroundTasks", "Forage", "ForageHTTP", "ForageScheduler", "ForageStore", "ForageTestSupport",
        .target(name: "AppleFrameworksStandIn", condition: .when(platforms: [.linux])),
      ]),
    .testTarget(
      name: "ForageCLITests",
      dependencies: [
        "ForageCLI", "ForageStore", "ForageTestSupport",
        .target(name: "ForagePostgres", condition: .when(traits: ["Postgres"])),
      ]),
  ],
  swiftLanguageModes: [.v6]
)
