// skiff version: the single source of truth (CMakeLists.txt and the amalgamated banner read it).
#ifndef SKIFF_VERSION_HPP
#define SKIFF_VERSION_HPP

#define SKIFF_VERSION_MAJOR 0
#define SKIFF_VERSION_MINOR 2
#define SKIFF_VERSION_PATCH 0

#endif // SKIFF_VERSION_HPP
