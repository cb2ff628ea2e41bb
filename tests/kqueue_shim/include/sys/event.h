// <sys/event.h> for the Linux test build of skiff's kqueue backend (SKIFF_KQUEUE_SHIM=ON).
//
// It declares the names skiff's kqueue path uses, each exactly as the real header declares
// it: FreeBSD 14 (sys/sys/event.h) by default, macOS (xnu bsd/sys/event.h) when
// SKIFF_KQUEUE_SHIM_MACOS is defined. Same field types, field order and packing of struct
// kevent, same constant values and spellings (so the same integer types), same prototypes,
// and an EV_SET that behaves as each system's does from C++. Code that compiles against both
// flavours here therefore compiles there; tests/kqueue_shim/CMakeLists.txt builds skiff both
// ways. kqueue_shim.cpp implements the FreeBSD flavour over epoll.
//
// Only the supported subset is declared, so that using anything else (EV_RECEIPT,
// EVFILT_TIMER, NOTE_LOWAT, ...) fails to compile instead of passing untested. Like the real
// headers, this one leaves struct timespec incomplete: include <sys/time.h> or <time.h>.
#ifndef SKIFF_TESTS_KQUEUE_SHIM_SYS_EVENT_H
#define SKIFF_TESTS_KQUEUE_SHIM_SYS_EVENT_H

#if defined(SKIFF_KQUEUE_SHIM_MACOS)
// macOS includes these itself, so a user may rely on uintptr_t and friends being declared.
#include <stdint.h>
#include <sys/types.h>
#endif

#define EVFILT_READ (-1)
#define EVFILT_WRITE (-2)
#if defined(SKIFF_KQUEUE_SHIM_MACOS)
#define EVFILT_USER (-10)
#else
#define EVFILT_USER (-11)
#endif

// Actions, then behaviour flags, then what kevent() reports back (same values on both).
#define EV_ADD 0x0001
#define EV_DELETE 0x0002
#define EV_ENABLE 0x0004
#define EV_DISABLE 0x0008
#define EV_ONESHOT 0x0010
#define EV_CLEAR 0x0020
#define EV_DISPATCH 0x0080
#define EV_EOF 0x8000
#define EV_ERROR 0x4000

// EVFILT_USER: the top two bits of an input fflags say how its low 24 bits change the stored
// flags; NOTE_TRIGGER fires the event.
#define NOTE_FFNOP 0x00000000
#define NOTE_FFAND 0x40000000
#define NOTE_FFOR 0x80000000
#define NOTE_FFCOPY 0xc0000000
#define NOTE_FFCTRLMASK 0xc0000000
#define NOTE_FFLAGSMASK 0x00ffffff
#define NOTE_TRIGGER 0x01000000

#if defined(SKIFF_KQUEUE_SHIM_MACOS)

// xnu packs it to 4 bytes; on LP64 that changes no offset, but it is what the header says.
#pragma pack(4)
struct kevent {
    uintptr_t ident;
    int16_t filter;
    uint16_t flags;
    uint32_t fflags;
    intptr_t data;
    void* udata;
};
#pragma pack()

// As on macOS: assigns the six fields through a local named __kevp__, nothing more.
#define EV_SET(kevp, a, b, c, d, e, f) \
    do {                               \
        struct kevent* __kevp__ = (kevp); \
        __kevp__->ident = (a);         \
        __kevp__->filter = (b);        \
        __kevp__->flags = (c);         \
        __kevp__->fflags = (d);        \
        __kevp__->data = (e);          \
        __kevp__->udata = (f);         \
    } while (0)

#else

// FreeBSD 12 and later; the real header spells the types __uintptr_t, __int64_t, __uint64_t
// and declares no <stdint.h> names, so neither does this one.
struct kevent {
    __UINTPTR_TYPE__ ident;
    short filter;
    unsigned short flags;
    unsigned int fflags;
    __INT64_TYPE__ data;
    void* udata;
    __UINT64_TYPE__ ext[4];
};

// FreeBSD's form for C++ (its C99 form uses a compound literal): assigns field by field
// through a local named kevp, so an argument that mentions kevp breaks there and here alike,
// and zeroes ext[].
#define EV_SET(kevp_, a, b, c, d, e, f) \
    do {                                \
        struct kevent* kevp = (kevp_);  \
        kevp->ident = (a);              \
        kevp->filter = (b);             \
        kevp->flags = (c);              \
        kevp->fflags = (d);             \
        kevp->data = (e);               \
        kevp->udata = (f);              \
        kevp->ext[0] = 0;               \
        kevp->ext[1] = 0;               \
        kevp->ext[2] = 0;               \
        kevp->ext[3] = 0;               \
    } while (0)

#endif // SKIFF_KQUEUE_SHIM_MACOS

struct timespec;

#ifdef __cplusplus
extern "C" {
#endif
int kqueue(void);
int kevent(int kq, const struct kevent* changelist, int nchanges, struct kevent* eventlist, int nevents,
           const struct timespec* timeout);
#ifdef __cplusplus
}
#endif

#endif // SKIFF_TESTS_KQUEUE_SHIM_SYS_EVENT_H
