// libpq for Swift. libpq's API has no C varargs functions that Forage calls,
// so this header only includes it; it is the one place C from libpq enters.
// Debian: libpq-dev (pkg-config libpq adds -I/usr/include/postgresql).
#ifndef FORAGE_CLIBPQ_SHIM_H
#define FORAGE_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
