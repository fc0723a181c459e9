#ifndef FORAGE_CSQLITE_SHIM_H
#define FORAGE_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
/// cannot import; this returns the same value.
static inline sqlite3_destructor_type forage_sqlite_transient(void) {
  return SQLITE_TRANSIENT;
}

/// SQLITE_STATIC (0): SQLite reads the bound bytes where they are, which the
/// caller keeps valid until the parameter is bound again.
static inline sqlite3_destructor_type forage_sqlite_static(void) {
  return SQLITE_STATIC;
}
#endif
