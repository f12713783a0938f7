// Expected events of the waits and the socket receives
// (symbol_caller_waits.c), under IOTAP_WAIT_THRESHOLD_US=20000: a wait that
// returned at once leaves nothing, one that blocked 100 ms one event. "fifo"
// is a named pipe on descriptor 22; sockets are "socket" whatever their inode.

#include <errno.h>
#include <sys/socket.h>

#include "gtest/gtest.h"
#include "tests/integration/symbol_cases.h"

namespace iotap::testing {

void AddWaitSpecs(SpecTable* specs) {
  SpecTable& s = *specs;

  // The first descriptor that was ready, or the first waited on; a timeout
  // of 0, a ready descriptor and a refused array (EFAULT) leave nothing.
  for (const char* name : {"poll", "__poll_chk", "ppoll", "__ppoll_chk"}) {
    s[name].cases = {
        {"timeout", {E(OP_POLL, "fifo").Req(1).Res(0)}},
        {"ready", {}},
        {"nonblocking", {}},
        {"wakes", {E(OP_POLL, "fifo").Req(1).Res(1)}},
        {"second", {E(OP_POLL, "fifo").Req(2).Res(1)}},
        {"efault", {}},
    };
    // The header gives the threshold the run was recorded with.
    s[name].check = [](const SymbolRun& run) {
      EXPECT_EQ(run.trace.processes.size(), 1u);
      EXPECT_EQ(run.main->header.wait_threshold_ns(), 20000000u);
      ASSERT_TRUE(run.main->end.has_value());
      EXPECT_EQ(run.main->end->reason(), EndOfTrace::REASON_EXIT);
    };
  }

  // After a timeout the kernel has emptied the sets: no descriptor to name.
  for (const char* name : {"select", "pselect"}) {
    s[name].cases = {
        {"timeout", {E(OP_SELECT).Req(23).Res(0)}},
        {"ready", {}},
        {"wakes", {E(OP_SELECT, "fifo").Req(23).Res(1)}},
        {"ebadf", {}},
    };
  }

  for (const char* name : {"epoll_wait", "epoll_pwait", "epoll_pwait2"}) {
    s[name].cases = {
        {"timeout", {E(OP_EPOLL_WAIT, "anon_inode:[eventpoll]").Req(4).Res(0)}},
        {"ready", {}},
        {"nonblocking", {}},
        {"wakes", {E(OP_EPOLL_WAIT, "anon_inode:[eventpoll]").Req(4).Res(1)}},
        {"ebadf", {}},
    };
  }

  s["sem_wait"].cases = {
      {"ready", {}},
      {"wakes", {E(OP_SEM_WAIT)}},
  };
  for (const char* name : {"sem_timedwait", "sem_clockwait"}) {
    s[name].cases = {
        {"timeout", {E(OP_SEM_WAIT).Fail(ETIMEDOUT)}},
        {"einval", {}},
        {"ready", {}},
        {"wakes", {E(OP_SEM_WAIT)}},
    };
  }

  // The error number is the result; errno means nothing to these.
  s["pthread_cond_wait"].cases = {
      {"wakes", {E(OP_COND_WAIT)}},
  };
  for (const char* name : {"pthread_cond_timedwait", "pthread_cond_clockwait"}) {
    s[name].cases = {
        {"timeout", {E(OP_COND_WAIT).Res(ETIMEDOUT)}},
        {"einval", {}},
        {"wakes", {E(OP_COND_WAIT)}},
    };
  }

  // Receives are recorded like reads, every call: 64 bytes of buffer, the
  // flags in aux.
  for (const char* name : {"recv", "__recv_chk", "recvfrom", "__recvfrom_chk"}) {
    s[name].cases = {
        {"peek", {E(OP_RECV, "socket").Req(64).Res(5).Aux(MSG_PEEK)}},
        {"ok", {E(OP_RECV, "socket").Req(64).Res(5)}},
        {"eagain", {E(OP_RECV, "socket").Req(64).Fail(EAGAIN).Aux(MSG_DONTWAIT)}},
        {"ebadf", {E(OP_RECV).Req(64).Fail(EBADF)}},
    };
  }
  // recvmsg's buffers are read only when the kernel accepted the message.
  s["recvmsg"].cases = {
      {"peek", {E(OP_RECV, "socket").Req(64).Res(5).Aux(MSG_PEEK)}},
      {"ok", {E(OP_RECV, "socket").Req(64).Res(5)}},
      {"eagain", {E(OP_RECV, "socket").Fail(EAGAIN).Aux(MSG_DONTWAIT)}},
      {"ebadf", {E(OP_RECV).Fail(EBADF)}},
  };
}

}  // namespace iotap::testing
