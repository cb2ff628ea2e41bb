// Separate compilation, for a project of many files: basic_server<Policy> compiled in one
// file of the project rather than in every file that builds or runs a server, as Boost.Beast's
// separate compilation and doctest's implementation-once do.
//
//   // in a header the project's files include, after <skiff/skiff.hpp>:
//   SKIFF_EXTERN_SERVER(skiff::single);   // compiled elsewhere: this file only calls it
//   // in exactly one .cpp of the project:
//   SKIFF_COMPILE_SERVER(skiff::single);  // compiled here, every member of it
//
// Name each policy the project uses, and only those: SKIFF_COMPILE_SERVER compiles every
// member of the server, so a program holds the code of each feature basic_server offers
// (uploads, files, ...) even if it never calls it, which a program that lets the compiler
// instantiate only what it calls does not. That is the price of compiling it once. The
// handlers, middleware and features a file names are still compiled where they are named
// (templates of their own), and so are the server's small members an optimiser inlines.
//
// Not here: anything but the server. A file that only declares handlers needs no server at
// all: <skiff/fwd.hpp>.
#ifndef SKIFF_APP_COMPILED_HPP
#define SKIFF_APP_COMPILED_HPP

#include "skiff/app/server.hpp"

// `Policy` as basic_server takes it (skiff::single, skiff::sharded, skiff::shared).
#define SKIFF_EXTERN_SERVER(Policy) extern template class skiff::basic_server<Policy>
#define SKIFF_COMPILE_SERVER(Policy) template class skiff::basic_server<Policy>

#endif // SKIFF_APP_COMPILED_HPP
