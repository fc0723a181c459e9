#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ForageTestSupport

/// `forage-bench`: the benchmark harness. Each subcommand measures one part
/// and prints figures to put beside its peers' (see BENCHMARKS.md).
@main
struct BenchMain {
  static let usage = """
    Usage: forage-bench <command> [options]

    Commands:
      parse DIR [--repeat K] [--json] [--select SEL] [--extract]
                                                       HTML parsing speed on every .html file of DIR
      fetch ...                                        HTTP fetching speed (see --help)
      simulate [--days N] [--tasks N]                  scheduler simulation speed
      decode [--records N] [--repeat K]                decoding stored records, beside JSONDecoder
      site DIR [--products N] [--seed S]               write the demo shop as static files (for nginx)
      stream [--commits N] [--store PATH|postgres://URL] commit-to-change-stream latency
    """

  static func main() {
    var args = Array(CommandLine.arguments.dropFirst())
    guard !args.isEmpty else {
      print(usage)
      exit(2)
    }
    let command = args.removeFirst()
    do {
      let status: Int32
      switch command {
      case "parse": status = try ParseBenchmark.run(args)
      case "fetch": status = try FetchBenchmark.run(args)
      case "simulate": status = try SimulationBenchmark.run(args)
      case "decode": status = try DecodeBenchmark.run(args)
      case "site": status = try writeSite(args)
      case "stream": status = try StreamBenchmark.run(args)
      case "--help", "-h", "help":
        print(usage)
        status = 0
      default:
        print("forage-bench: unknown command \(command)\n\n\(usage)")
        status = 2
      }
      exit(status)
    } catch {
      print("forage-bench \(command): \(error)")
      exit(1)
    }
  }

  /// `site DIR [--products N] [--seed S]`: writes the demo shop's static layout.
  static func writeSite(_ args: [String]) throws -> Int32 {
    var products = 10_000
    var seed: UInt64 = 1
    var dir: String?
    var i = 0
    while i < args.count {
      switch args[i] {
      case "--products": i += 1; products = i < args.count ? Int(args[i]) ?? products : products
      case "--seed": i += 1; seed = i < args.count ? UInt64(args[i]) ?? seed : seed
      default: dir = args[i]
      }
      i += 1
    }
    guard let dir else {
      print("usage: forage-bench site DIR [--products N] [--seed S]")
      return 2
    }
    try DemoSite.writeStaticSite(to: dir, products: products, seed: seed)
    print("wrote \(products) products to \(dir)")
    return 0
  }
}
