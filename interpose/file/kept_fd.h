// A descriptor the shim keeps open between uses, parked high in the
// descriptor table.
//
// Opening a file takes the lowest free descriptor number, so a descriptor the
// shim opened, even for a moment, could shift the number the program's own
// next open() returns. The shim therefore opens each file it needs again and
// again (the trace file, /proc/self/schedstat) once, moves the descriptor just
// below min(RLIMIT_NOFILE, 1024), and remembers which file it is. Before each
// use it checks that the number still names that file: a program that closed
// every descriptor, or dup2'd over ours, makes the check fail, and the shim
// forgets the number (it is the program's now) and opens the file again.
//
// The writer thread has a descriptor table of its own (writer.cc explains
// why), so a kept file has a number in each table: every thread sees the one
// of its own table, opened and checked the same way, except that a number
// in the writer's own table is checked once (no one else can close it),
// not at every use (an fstat per look at /proc/self/pagemap was a tenth of
// a memmap DataLoader writer's time).

#ifndef IOTAP_INTERPOSE_FILE_KEPT_FD_H_
#define IOTAP_INTERPOSE_FILE_KEPT_FD_H_

#include <stdint.h>
#include <sys/types.h>

namespace iotap::interpose {

class KeptFd {
 public:
  // Called by a thread that has just given itself an empty descriptor table
  // of its own: from then on it adopts and uses descriptors in that table.
  static void UseOwnTable();
  // Whether the calling thread's descriptor table is its own.
  static bool InOwnTable();

  // Takes `fd` over: moves it high and closes the original. Returns false,
  // leaving `fd` open and the caller's, when it cannot be moved; the caller
  // then uses a short-lived descriptor instead.
  bool Adopt(int fd);

  // The descriptor if it still names the adopted file, otherwise -1 (and the
  // number is forgotten, never closed: someone else owns it now).
  int Get();

  // The number last adopted, unchecked (it may be someone else's now), or
  // -1: for announcing a use of it before Get() checks it.
  int number() const { return Mine().fd; }

  // Closes the calling thread's table's descriptor if it still names the
  // adopted file (a fork child closing its copy of the parent's), and forgets
  // it. (A fork child's writer thread has a new table, where the number its
  // parent's writer had is checked like any other before it is used.)
  void Close();

 private:
  struct Slot {
    int fd = -1;
    dev_t dev = 0;
    ino_t ino = 0;
    // The writer's own table (UseOwnTable) the number was last checked in,
    // 0 for none: a number there needs no check again (Get).
    uint32_t table = 0;
  };
  // The slot of the calling thread's table: [0] the program's, [1] the
  // writer thread's own.
  Slot& Mine() { return slots_[InOwnTable() ? 1 : 0]; }
  const Slot& Mine() const { return slots_[InOwnTable() ? 1 : 0]; }

  Slot slots_[2];
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_FILE_KEPT_FD_H_
