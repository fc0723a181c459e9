import Foundation

/// The service files `forage init --service` writes: a systemd unit and a
/// launchd LaunchAgent that run `forage daemon` with absolute paths.
///
///     let spec = ServiceFiles.Spec(binary: "/usr/local/bin/forage", config: "/srv/forage/forage.json",
///                                  storeFolder: "/srv/forage", storeArgument: nil, scope: .user)
///     print(ServiceFiles.systemdUnit(spec))
enum ServiceFiles {
  /// Which service manager the file is for.
  enum Manager: String, CaseIterable {
    case systemd, launchd
  }

  /// A systemd unit for the user's own service manager (`systemctl --user`,
  /// no root needed: the default) or the system's.
  enum Scope: String {
    case user, system
  }

  /// What the service runs.
  struct Spec {
    /// The forage executable, absolute.
    var binary: String
    /// The config file, absolute.
    var config: String
    /// The folders the daemon writes (the store's and the config's, for the
    /// files its notification channels append to), absolute.
    var writableFolders: [String]
    /// The `--store` value to pass (absolute), or nil to use the config's.
    var storeArgument: String?
    var scope: Scope = .user
    /// The user a system unit runs as.
    var user: String? = nil
    /// The folder a launchd agent writes its logs in.
    var logFolder: String

    var daemonArguments: [String] {
      ["daemon", "--config", config] + (storeArgument.map { ["--store", $0] } ?? [])
    }
  }

  /// The watchdog interval of the unit: the daemon's loop says it is alive
  /// at half of it.
  static let watchdogSeconds = 60

  /// A `Type=notify` unit: restarted on failure, watched, reloaded by
  /// SIGHUP, and confined (read-only system, writable store folder).
  ///
  /// - SeeAlso: <https://www.freedesktop.org/software/systemd/man/latest/systemd.service.html>,
  ///   <https://www.freedesktop.org/software/systemd/man/latest/systemd.exec.html>
  static func systemdUnit(_ spec: Spec) -> String {
    var lines = [
      "# Written by forage init --service systemd. Install (\(spec.scope == .user ? "as this user" : "as root")):",
    ]
    if spec.scope == .user {
      lines += [
        "#   cp THIS_FILE ~/.config/systemd/user/forage.service",
        "#   systemctl --user daemon-reload && systemctl --user enable --now forage",
        "#   loginctl enable-linger \"$USER\"   # keep it running when you log out",
        "# The sandboxing below needs unprivileged user namespaces in a user unit",
        "# (Debian's default); drop those lines if the service fails with status 218.",
      ]
    } else {
      lines += [
        "#   cp THIS_FILE /etc/systemd/system/forage.service",
        "#   systemctl daemon-reload && systemctl enable --now forage",
      ]
    }
    lines += [
      "# Reload the config: systemctl\(spec.scope == .user ? " --user" : "") reload forage. Logs: journalctl\(spec.scope == .user ? " --user" : "") -u forage",
      "",
      "[Unit]",
      "Description=Forage: keeps web data fresh in the background",
      "Wants=network-online.target",
      "After=network-online.target",
      "",
      "[Service]",
      "Type=notify",
      "ExecStart=" + ([spec.binary] + spec.daemonArguments).map { systemdQuoted($0) }.joined(separator: " "),
      "ExecReload=/bin/kill -HUP $MAINPID",
      "Restart=on-failure",
      "RestartSec=5s",
      "WatchdogSec=\(watchdogSeconds)s",
      // One path to the end of the line: no quotes (systemd reads them as part of it).
      "WorkingDirectory=" + ((spec.config as NSString).deletingLastPathComponent).replacingOccurrences(of: "%", with: "%%"),
    ]
    if spec.scope == .system, let user = spec.user { lines.append("User=\(user)") }
    lines += [
      "NoNewPrivileges=yes",
      "ProtectSystem=strict",
      "ReadWritePaths=" + spec.writableFolders.map { systemdQuoted($0, command: false) }.joined(separator: " "),
    ]
    // A private /tmp would hide a store kept under /tmp.
    if !spec.writableFolders.contains(where: { $0 == "/tmp" || $0.hasPrefix("/tmp/") || $0.hasPrefix("/var/tmp") }) {
      lines.append("PrivateTmp=yes")
    }
    lines += [
      "ProtectControlGroups=yes",
      "ProtectKernelModules=yes",
      "ProtectKernelTunables=yes",
      "RestrictSUIDSGID=yes",
      "LockPersonality=yes",
      "",
      "[Install]",
      "WantedBy=\(spec.scope == .user ? "default.target" : "multi-user.target")",
      "",
    ]
    return lines.joined(separator: "\n")
  }

  /// A word of a unit's command line or path list: quoted (with `\` and
  /// `"` escaped) when it holds a space, quote or backslash; `%` doubled
  /// (systemd's specifier character) and, on a command line, `$` doubled
  /// (its variables).
  static func systemdQuoted(_ word: String, command: Bool = true) -> String {
    var escaped = word.replacingOccurrences(of: "%", with: "%%")
    if command { escaped = escaped.replacingOccurrences(of: "$", with: "$$") }
    guard escaped.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "'" || $0 == "\t" }) else {
      return escaped
    }
    return "\"" + escaped.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
  }

  /// The LaunchAgent's label.
  static let launchdLabel = "org.forage.daemon"

  /// A LaunchAgent property list: started at load, kept alive, its output
  /// and errors appended to log files. (No comment in it: XML comments may
  /// not hold `--`, which every forage option starts with; `forage init`
  /// prints how to install it.)
  ///
  /// - SeeAlso: `man launchd.plist`
  static func launchdPlist(_ spec: Spec) -> String {
    func string(_ s: String) -> String { "<string>\(xmlEscaped(s))</string>" }
    let arguments = ([spec.binary] + spec.daemonArguments).map { "    " + string($0) }.joined(separator: "\n")
    let folder = spec.logFolder
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
      <plist version="1.0">
      <dict>
        <key>Label</key>
        \(string(launchdLabel))
        <key>ProgramArguments</key>
        <array>
      \(arguments)
        </array>
        <key>WorkingDirectory</key>
        \(string((spec.config as NSString).deletingLastPathComponent))
        <key>RunAtLoad</key>
        <true/>
        <key>KeepAlive</key>
        <true/>
        <key>ProcessType</key>
        <string>Background</string>
        <key>StandardOutPath</key>
        \(string((folder as NSString).appendingPathComponent("forage.out.log")))
        <key>StandardErrorPath</key>
        \(string((folder as NSString).appendingPathComponent("forage.err.log")))
      </dict>
      </plist>

      """
  }

  /// Text with `&`, `<`, `>` and `"` as XML entities.
  static func xmlEscaped(_ s: String) -> String {
    s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
  }
}
