#ifndef FORAGE_CSQLITE_SHIM_H
#define FORAGE_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
/// cannot import; this returns the same value.
static inline sqlite3_destructor_type forage_sqlite_transient(void) {
  return SQLITE_TRANSIENT;
}
#endif
