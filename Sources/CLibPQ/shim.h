// libpq for Swift. libpq's API has no C varargs functions that Forage calls,
// so this header only includes it; it is the one place C from libpq enters.
// Debian: libpq-dev (pkg-config libpq adds -I/usr/include/postgresql).
// macOS: Homebrew's libpq (keg-only: its pkg-config file is found through
// PKG_CONFIG_PATH="$(brew --prefix libpq)/lib/pkgconfig").
#ifndef FORAGE_CLIBPQ_SHIM_H
#define FORAGE_CLIBPQ_SHIM_H
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#error "Forage's Postgres trait needs libpq's headers (libpq-fe.h), and they were not found. Debian or Ubuntu: apt-get install libpq-dev pkg-config. macOS: brew install libpq pkg-config, then export PKG_CONFIG_PATH=\"$(brew --prefix libpq)/lib/pkgconfig\". Or build without PostgreSQL stores: swift build --disable-default-traits."
#endif
#endif
