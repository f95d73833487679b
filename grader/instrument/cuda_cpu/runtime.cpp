// Dripstone's CPU executor for CUDA C++: the scheduler and the launcher (see dripstone_cuda.h).
//
// One process runs one launch in one thread order: `runner REQUEST_DIR SCHEDULE TRACE`. REQUEST_DIR/request
// holds the kernel, the grid, the block and the arguments; buffer i comes from in<i>.bin and goes back as
// out<i>.bin. Each block runs as blockDim fibers that switch only at __syncthreads(), warp primitives and
// __syncwarp(), in thread order 0, 1, ... (schedule 0) or in reverse order (schedule 1); the parent runs both
// orders, each in a process of its own, and compares: a kernel whose result depends on the order has a race.
// Global buffers sit against PROT_NONE guard pages (schedule 0: the end, schedule 1: the start), so
// an access past either end faults; the SIGSEGV handler reports the instruction, the address and
// the thread; a launch that runs past its CPU-time limit is stopped where it is. Faults are lines "FAULT <kind> <line> <message>" on stdout; then exit status 3.
// Refused system calls are "FAULT syscall pc=<pc> <number>" (install_limits).
// The kernels' own printf goes to REQUEST_DIR/printf.txt (schedule 0 of an untraced launch only, cut at 1 MiB as a
// GPU's printf buffer): `stdout` is a stream of ours, the protocol's lines go to the process's stdout (`proto`).
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>
#include <map>
#include <tuple>
#include <cstddef>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#include "dripstone_cuda.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
extern "C" const dripstone::Entry dripstone_kernels[];  // launch.cpp's table, ended by a null name

namespace ds {

// What the parent asked for (the thread order, race tracing): set by main before the first instruction of the
// learner's code runs, then on a read-only page the seccomp filter keeps read-only (no mprotect, munmap or fixed
// mmap of it): a kernel can read it, not change it.
struct alignas(4096) Config {
    int schedule;  // 0: threads in order 0, 1, ...; 1: in reverse order
    bool trace;    // race tracing: every access to __shared__ variables is recorded
};
Config cfg;

enum State { READY, AT_BARRIER, AT_WARP, DONE };
struct Fiber {
    void* sp = nullptr;
    char* stack = nullptr;
    uint3 tid{};
    State state = READY;
    int line = 0;          // where it waits
    int op = 0;            // warp op / barrier op
    unsigned mask = 0;
    unsigned long long value = 0, result = 0;
    int arg = 0, width = 32;
};

constexpr size_t STACK = 256 * 1024;
std::vector<Fiber> fibers;
int current = -1;
void* scheduler_sp = nullptr;
const dripstone::Entry* running = nullptr;
const unsigned long long* slots = nullptr;
size_t page = 4096;

FILE* proto = stdout;  // the launcher's protocol (FAULT, RACE, OK lines); main points `stdout` elsewhere
constexpr size_t PRINTF_CAP = 1 << 20;  // a GPU's default printf buffer (cudaLimitPrintfFifoSize)
struct KernelOutput {
    int fd = -1;      // REQUEST_DIR/printf.txt
    bool on = false;  // schedule 0 of an untraced launch: the reruns print nothing
    size_t written = 0;
};
KernelOutput kout;

ssize_t kernel_write(void*, const char* buf, size_t n) {
    if (kout.on && kout.fd >= 0 && kout.written < PRINTF_CAP) {
        const size_t k = std::min(n, PRINTF_CAP - kout.written);
        if (write(kout.fd, buf, k) > 0) kout.written += k;
    }
    return (ssize_t)n;  // what is past the cap is dropped, as on a GPU
}

[[noreturn]] void fault(const char* kind, int line, const char* fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);  // the kernel's printf output up to the fault
    fprintf(proto, "FAULT %s %d %s\n", kind, line, msg);
    fflush(proto);
    _exit(3);
}

std::string thread_name(int i) {
    char b[128];
    const uint3 t = fibers[i].tid;
    snprintf(b, sizeof b, "thread (%u, %u, %u) of block (%u, %u, %u)", t.x, t.y, t.z, blockIdx.x, blockIdx.y,
             blockIdx.z);
    return b;
}

}  // namespace ds

// ---- context switch (x86-64 SysV callee-saved registers; kernels never change the FP control words) ---
extern "C" void ds_switch(void** save_sp, void* new_sp);
extern "C" void ds_trampoline();
asm(R"(
.text
.globl ds_switch
.type ds_switch,@function
ds_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size ds_switch, .-ds_switch
.globl ds_trampoline
.type ds_trampoline,@function
ds_trampoline:
    call *%r12
    ud2
.size ds_trampoline, .-ds_trampoline
)");

namespace ds {

void yield_to_scheduler() {
    Fiber& f = fibers[current];
    ds_switch(&f.sp, scheduler_sp);
}

extern "C" void ds_fiber_main() {
    running->invoke(slots);
    fibers[current].state = DONE;
    yield_to_scheduler();
    __builtin_trap();
}

void alloc_stack(Fiber& f) {  // a guard page under each stack: an overflow faults instead of corrupting a neighbour
    char* m = (char*)mmap(nullptr, STACK + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) fault("resources", 0, "cannot allocate fiber stacks (%zu threads)", fibers.size());
    mprotect(m, page, PROT_NONE);
    f.stack = m + page;
}

void init_fiber(Fiber& f) {
    unsigned long long* top = (unsigned long long*)(f.stack + STACK);  // 16-aligned
    top[-1] = (unsigned long long)&ds_trampoline;                     // ret address: rsp = top after ret
    top[-2] = 0;                                                       // rbp
    top[-3] = 0;                                                       // rbx
    top[-4] = (unsigned long long)&ds_fiber_main;                      // r12
    top[-5] = top[-6] = top[-7] = 0;                                   // r13..r15
    f.sp = &top[-7];
    f.state = READY;
}

// ---- race tracing (a rerun after the thread orders disagreed): every access to __shared__ variables
// faults on a PROT_NONE page, is recorded, then single-stepped. Two accesses to one word by different
// threads, one a write, with no __syncthreads() between them (nor a warp primitive, within a warp) race.
int block_epoch = 0;
std::vector<int> warp_epoch;
struct Access {
    int fiber = -1, epoch = -1, wepoch = -1;
    unsigned long long pc = 0;
};
struct Word {
    Access write, read;
};
std::vector<Word> words;

extern "C" char __start_dripstone_smem[] __attribute__((weak));
extern "C" char __stop_dripstone_smem[] __attribute__((weak));

char* smem_lo() { return (char*)((uintptr_t)__start_dripstone_smem & ~(uintptr_t)4095); }
size_t smem_len() { return ((uintptr_t)__stop_dripstone_smem + 4095 & ~(uintptr_t)4095) - (uintptr_t)smem_lo(); }
void protect_shared(bool on) {
    if (cfg.trace && __start_dripstone_smem != __stop_dripstone_smem)
        mprotect(smem_lo(), smem_len(), on ? PROT_NONE : PROT_READ | PROT_WRITE);
}

bool ordered(const Access& a, int fiber) {
    if (a.fiber < 0 || a.fiber == fiber || a.epoch < block_epoch) return true;
    return a.fiber / 32 == fiber / 32 && a.wepoch < warp_epoch[fiber / 32];
}

void record_access(const char* addr, bool write, unsigned long long pc) {
    if (current < 0 || addr < __start_dripstone_smem || addr >= __stop_dripstone_smem) return;
    Word& w = words[(addr - __start_dripstone_smem) / 4];
    const Access now{current, block_epoch, warp_epoch[current / 32], pc};
    const Access* other = nullptr;
    if (!ordered(w.write, current)) other = &w.write;
    else if (write && !ordered(w.read, current)) other = &w.read;
    if (other) {
        fprintf(proto, "RACEAT 0x%llx %s 0x%llx %s %s|%s\n", other->pc, other == &w.write ? "writes" : "reads", pc,
               write ? "writes" : "reads", thread_name(other->fiber).c_str(), thread_name(current).c_str());
        fflush(proto);
        _exit(5);
    }
    if (write) w.write = now;
    else w.read = now;
}

void run_fiber(int i) {
    current = i;
    threadIdx = fibers[i].tid;
    protect_shared(true);
    ds_switch(&scheduler_sp, fibers[i].sp);
    protect_shared(false);
    current = -1;
}

const char* op_name(int op) {
    static const char* names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                  "__ballot_sync", "__any_sync", "__all_sync", "__syncwarp"};
    return names[op];
}

std::string where(int i) {
    const Fiber& f = fibers[i];
    char b[160];
    if (f.state == DONE) return "has returned";
    if (f.state == AT_BARRIER) snprintf(b, sizeof b, "waits at the __syncthreads() on line %d", f.line);
    else snprintf(b, sizeof b, "waits at the %s on line %d", op_name(f.op), f.line);
    return b;
}

int source_lane(const Fiber& f, int lane) {
    const int w = f.width, base = lane / w * w;
    switch (f.op) {
        case DS_SHFL_IDX: return base + ((f.arg % w) + w) % w;
        case DS_SHFL_UP: return lane - f.arg >= base ? lane - f.arg : lane;
        case DS_SHFL_DOWN: return lane + f.arg < base + w ? lane + f.arg : lane;
        case DS_SHFL_XOR: return (lane ^ f.arg) < base + w ? (lane ^ f.arg) : lane;
        default: return lane;
    }
}

// Release the lanes of warp `w` whose masks' lanes all wait at a warp primitive; true if any moved.
bool resolve_warp(int w, int nthreads) {
    const int first = w * 32, n = std::min(32, nthreads - first);
    unsigned waiting = 0;
    for (int l = 0; l < n; ++l)
        if (fibers[first + l].state == AT_WARP) waiting |= 1u << l;
    if (!waiting) return false;
    bool moved = false;
    for (int l = 0; l < n; ++l) {
        Fiber& f = fibers[first + l];
        if (f.state != AT_WARP || (f.mask & ~waiting)) continue;
        unsigned long long r = 0;
        if (f.op == DS_BALLOT || f.op == DS_ANY || f.op == DS_ALL) {
            unsigned ballot = 0;
            for (int k = 0; k < n; ++k)
                if ((f.mask >> k & 1u) && fibers[first + k].value) ballot |= 1u << k;
            r = f.op == DS_BALLOT ? ballot : f.op == DS_ANY ? ballot != 0 : (ballot & f.mask) == f.mask;
        } else if (f.op != DS_SYNCWARP) {
            const int src = source_lane(f, l);
            if (!(f.mask >> src & 1u))
                fault("warp", f.line,
                      "%s: lane %d reads lane %d, which is not in the mask 0x%08x (%s): the result is undefined "
                      "on a GPU; include every lane you read in the mask",
                      op_name(f.op), l, src, f.mask, thread_name(first + l).c_str());
            r = fibers[first + src].value;
        }
        f.result = r;
        moved = true;
    }
    for (int l = 0; l < n; ++l) {  // release after computing: lanes read each other's deposits above
        Fiber& f = fibers[first + l];
        if (f.state == AT_WARP && !(f.mask & ~waiting)) f.state = READY;
    }
    if (moved && cfg.trace) ++warp_epoch[w];
    return moved;
}

void stuck(int nthreads) {
    for (int i = 0; i < nthreads; ++i) {  // a warp primitive waiting for a lane that will never come
        const Fiber& f = fibers[i];
        if (f.state != AT_WARP) continue;
        const int first = i / 32 * 32;
        for (int l = 0; l < 32 && first + l < nthreads + 32; ++l) {
            if (!(f.mask >> l & 1u)) continue;
            if (first + l >= nthreads)
                fault("warp", f.line,
                      "%s with mask 0x%08x waits for lane %d, which does not exist (blockDim has %d threads): "
                      "a warp primitive needs every lane of its mask",
                      op_name(f.op), f.mask, l, nthreads);
            if (fibers[first + l].state != AT_WARP)
                fault("divergence", f.line,
                      "lane %d (%s) waits at the %s on line %d for lane %d of its warp, which %s: every lane in "
                      "the mask 0x%08x must reach the same warp primitive",
                      i % 32, thread_name(i).c_str(), op_name(f.op), f.line, l, where(first + l).c_str(), f.mask);
        }
    }
    int at = -1, other = -1, done = -1;
    for (int i = 0; i < nthreads; ++i) {
        if (fibers[i].state == AT_BARRIER) {
            if (at < 0) at = i;
            else if (fibers[i].line != fibers[at].line && other < 0) other = i;
        } else if (fibers[i].state == DONE && done < 0) {
            done = i;
        }
    }
    if (at >= 0 && other >= 0)
        fault("divergence", fibers[at].line,
              "divergent __syncthreads(): %s waits at the barrier on line %d while %s waits at the one on line %d: "
              "every thread of the block must reach the same __syncthreads() (keep barriers out of branches that "
              "depend on the thread)",
              thread_name(at).c_str(), fibers[at].line, thread_name(other).c_str(), fibers[other].line);
    if (at >= 0 && done >= 0)
        fault("divergence", fibers[at].line,
              "divergent __syncthreads(): %s waits at the barrier on line %d but %s has returned without reaching "
              "it: every thread of the block must reach each __syncthreads() (no early return, no barrier inside "
              "a branch that depends on the thread)",
              thread_name(at).c_str(), fibers[at].line, thread_name(done).c_str());
    fault("deadlock", 0, "the block cannot make progress");
}

void run_block(int nthreads) {
    for (int i = 0; i < nthreads; ++i) init_fiber(fibers[i]);
    for (;;) {
        bool ran = false;
        for (int k = 0; k < nthreads; ++k) {
            const int i = cfg.schedule == 0 ? k : nthreads - 1 - k;
            if (fibers[i].state == READY) {
                run_fiber(i);
                ran = true;
            }
        }
        bool moved = false;
        for (int w = 0; w * 32 < nthreads; ++w) moved |= resolve_warp(w, nthreads);
        if (moved || ran) continue;
        int waiting = 0, done = 0;
        for (int i = 0; i < nthreads; ++i) {
            waiting += fibers[i].state == AT_BARRIER;
            done += fibers[i].state == DONE;
        }
        if (done == nthreads) return;
        bool same = true;
        for (int i = 1; i < nthreads && same; ++i) same = fibers[i].line == fibers[0].line;
        if (waiting == nthreads && same) {
            int count = 0, all = 1, any = 0;
            for (int i = 0; i < nthreads; ++i) {
                count += fibers[i].value != 0;
                all &= fibers[i].value != 0;
                any |= fibers[i].value != 0;
            }
            for (int i = 0; i < nthreads; ++i) {
                fibers[i].result = fibers[i].op == 0 ? count : fibers[i].op == 1 ? all : any;
                fibers[i].state = READY;
            }
            ++block_epoch;
            continue;
        }
        stuck(nthreads);
    }
}

}  // namespace ds

using namespace ds;

extern "C" void dripstone_syncthreads(int line) { dripstone_syncthreads_count(0, line, 0); }

extern "C" int dripstone_syncthreads_count(int pred, int line, int op) {
    Fiber& f = fibers[current];
    f.state = AT_BARRIER;
    f.line = line;
    f.op = op;
    f.value = pred != 0;
    yield_to_scheduler();
    return (int)fibers[current].result;
}

extern "C" unsigned long long dripstone_warp_op(int op, unsigned mask, unsigned long long bits, int arg, int width,
                                                int line) {
    Fiber& f = fibers[current];
    const int lin = current, lane = lin % 32;
    if (!(mask >> lane & 1u))
        fault("warp", line,
              "%s with mask 0x%08x called by lane %d (%s), which is not in the mask: each calling lane must be in "
              "it (0xffffffff for the whole warp)",
              op_name(op), mask, lane, thread_name(lin).c_str());
    if (width <= 0 || width > 32 || (width & (width - 1)))
        fault("warp", line, "%s: width %d is not a power of 2 between 1 and 32", op_name(op), width);
    f.state = AT_WARP;
    f.op = op;
    f.mask = mask;
    f.value = bits;
    f.arg = arg;
    f.width = width;
    f.line = line;
    yield_to_scheduler();
    return fibers[current].result;
}

extern "C" unsigned dripstone_activemask(void) {
    const int first = current / 32 * 32;
    unsigned m = 0;
    for (int l = 0; l < 32 && first + l < (int)fibers.size(); ++l)
        if (fibers[first + l].state != DONE) m |= 1u << l;
    return m;
}

extern "C" void dripstone_trap(const char* what, int line) {
    fault("trap", line, "%s in %s", what, current >= 0 ? thread_name(current).c_str() : "host code");
}

// ---- -fsanitize=bounds' reports (g++ calls these on a static array indexed past its size): the runtime's own, not
// libubsan's, which would read /proc and the executable to describe the fault after the limits are installed
struct UbsanLocation {
    const char* file;
    unsigned line, column;
};
struct UbsanType {
    unsigned short kind, info;
    char name[1];
};
struct UbsanOutOfBounds {
    UbsanLocation loc;
    const UbsanType* array;
    const UbsanType* index;
};
extern "C" [[noreturn]] void __ubsan_handle_out_of_bounds_abort(UbsanOutOfBounds* d, unsigned long value) {
    const bool is_signed = d->index->kind == 0 && (d->index->info & 1);
    const unsigned bits = 1u << (d->index->info >> 1);
    char index[32];
    if (is_signed) {
        const long long v = bits < 64 ? (long long)(value << (64 - bits)) >> (64 - bits) : (long long)value;
        snprintf(index, sizeof index, "%lld", v);
    } else {
        snprintf(index, sizeof index, "%llu", (unsigned long long)value);
    }
    fflush(stdout);
    fprintf(stderr, "%s:%u:%u: runtime error: index %s out of bounds for type '%s'\n", d->loc.file, d->loc.line,
            d->loc.column, index, d->array->name);
    fflush(stderr);
    _exit(1);
}
extern "C" [[noreturn]] void __ubsan_handle_out_of_bounds(UbsanOutOfBounds* d, unsigned long value) {
    __ubsan_handle_out_of_bounds_abort(d, value);
}

// ---- faults: SIGSEGV on a guard page, SIGALRM for a kernel that never returns ------------------------
struct Buffer {
    char* map = nullptr;
    size_t map_len = 0;
    char* data = nullptr;
    size_t bytes = 0;
    size_t param = 0;  // which kernel parameter
    std::vector<char> input;
};
constexpr size_t GUARD = 4u << 20;  // PROT_NONE bytes on each side of a buffer: a tail read far past it faults too
static std::vector<Buffer> buffers;

static void on_signal(int sig, siginfo_t* info, void* uc_) {
    ucontext_t* uc = (ucontext_t*)uc_;
    const unsigned long long pc = uc->uc_mcontext.gregs[REG_RIP];
    if (sig == SIGTRAP) {  // the traced instruction ran: protect shared memory again
        protect_shared(true);
        uc->uc_mcontext.gregs[REG_EFL] &= ~0x100LL;
        return;
    }
    const char* fault_addr = (const char*)info->si_addr;
    if (sig == SIGSEGV && __start_dripstone_smem != __stop_dripstone_smem && fault_addr >= smem_lo() &&
        fault_addr < smem_lo() + smem_len()) {
        // unprotect before reading any global: the runtime's own variables may share these pages
        mprotect(smem_lo(), smem_len(), PROT_READ | PROT_WRITE);
        if (cfg.trace && current >= 0) {
            record_access(fault_addr, uc->uc_mcontext.gregs[REG_ERR] & 2, pc);
            uc->uc_mcontext.gregs[REG_EFL] |= 0x100LL;  // single-step it, then SIGTRAP
            return;
        }
    }
    std::string who = current >= 0 ? thread_name(current) : std::string("the launcher");
    if (sig == SIGVTALRM) {
        fprintf(proto, "FAULT timeout pc=0x%llx the kernel did not finish: %s was running when it was stopped\n", pc,
               who.c_str());
    } else {
        const char* addr = fault_addr;
        const bool write = uc->uc_mcontext.gregs[REG_ERR] & 2;
        std::string what = "an address outside every buffer";
        for (size_t i = 0; i < buffers.size(); ++i) {
            const Buffer& b = buffers[i];
            char d[200];
            if (addr >= b.data + b.bytes && addr < b.data + b.bytes + GUARD) {
                snprintf(d, sizeof d, "byte %lld of parameter #%zu (a %zu-byte buffer): %lld bytes past its end",
                         (long long)(addr - b.data), b.param, b.bytes, (long long)(addr - b.data - b.bytes));
                what = d;
            } else if (addr < b.data && addr >= b.data - GUARD) {
                snprintf(d, sizeof d, "%lld bytes before the start of parameter #%zu (a %zu-byte buffer)",
                         (long long)(b.data - addr), b.param, b.bytes);
                what = d;
            }
        }
        for (const Fiber& f : fibers)
            if (f.stack && addr < f.stack && addr >= f.stack - page) what = "the thread's stack limit (too deep)";
        fprintf(proto, "FAULT memory pc=0x%llx %s %s by %s\n", pc, write ? "writes" : "reads", what.c_str(), who.c_str());
    }
    fflush(stdout);
    fflush(proto);
    _exit(3);
}

static void install_handlers(unsigned seconds) {
    // the handler's stack is mapped apart: a static one could share a page with __shared__ variables,
    // which race tracing protects
    const size_t alt = 64 * 1024;
    stack_t ss{};
    ss.ss_sp = mmap(nullptr, alt, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ss.ss_size = alt;
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
    sigaction(SIGVTALRM, &sa, nullptr);
    sigaction(SIGTRAP, &sa, nullptr);
    if (seconds) {  // CPU time, not wall time: a loaded machine slows a kernel down, it does not make it endless
        itimerval t{};
        t.it_value.tv_sec = seconds;
        setitimer(ITIMER_VIRTUAL, &t, nullptr);
    }
}

// ---- the launcher ----------------------------------------------------------------------------------
static void place(Buffer& b, int sched) {  // schedule 0: the end against the guard; 1: the start after it
    const size_t span = (b.bytes + page - 1) / page * page;
    if (!b.map) {
        b.map_len = span + 2 * GUARD;
        b.map = (char*)mmap(nullptr, b.map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (b.map == MAP_FAILED) fault("resources", 0, "cannot map a %zu-byte buffer", b.bytes);
        if (span) mprotect(b.map + GUARD, span, PROT_READ | PROT_WRITE);
    }
    b.data = sched == 0 ? b.map + GUARD + span - b.bytes : b.map + GUARD;
    if (b.bytes) memcpy(b.data, b.input.data(), b.bytes);
}

static std::vector<char> read_file(const std::string& path) {
    std::vector<char> out;
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) fault("launcher", 0, "cannot read %s", path.c_str());
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
    fclose(f);
    return out;
}

// `extern __shared__` arrays (dynamic shared memory): the launcher's generated file defines each one
// (in the dripstone_smem section, DYNAMIC_CAP bytes) and registers it here; a launch may use up to its shared_bytes.
static std::vector<std::pair<char*, size_t>>& dynamic_shared() {  // filled by other files' static initializers
    static std::vector<std::pair<char*, size_t>> zones;
    return zones;
}
extern "C" void dripstone_dynamic_shared(void* p, size_t cap) { dynamic_shared().push_back({(char*)p, cap}); }

static void poison_shared() {
    if (__start_dripstone_smem && __stop_dripstone_smem)
        memset(__start_dripstone_smem, 0xff, __stop_dripstone_smem - __start_dripstone_smem);
    for (auto& d : dynamic_shared()) memset(d.first, 0xff, d.second);
}

// ---- the limits the learner's code runs under (installed by main before it calls the kernel) -----------
// A seccomp filter: the system calls a kernel and this runtime need once everything is set up (write to the
// descriptors already open, memory from brk or a fresh mmap, the exit) and nothing else: no file is opened, no
// process started or signalled, no signal handler or timer installed; mprotect only on the __shared__ pages
// (race tracing), never a fixed mmap, munmap, mremap or madvise (which could replace the read-only Config page).
// A refused call stops the launch with a SIGSYS that on_sigsys reports (the instruction and the call's number).
static void on_sigsys(int, siginfo_t* info, void* uc_) {
    ucontext_t* uc = (ucontext_t*)uc_;
    fprintf(proto, "FAULT syscall pc=0x%llx %d\n", (unsigned long long)uc->uc_mcontext.gregs[REG_RIP], info->si_syscall);
    fflush(proto);
    syscall(SYS_exit_group, 3);
}

static void install_limits() {
    // glibc's malloc then grows the heap with brk only (no mmap, munmap or madvise to trim it)
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);
    struct sigaction sa {};
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSYS, &sa, nullptr);
    mprotect(&cfg, sizeof cfg, PROT_READ);
    const unsigned long long smem = (unsigned long long)(uintptr_t)smem_lo();
    const unsigned allowed[] = {SYS_write, SYS_brk, SYS_rt_sigreturn, SYS_exit, SYS_exit_group, SYS_futex,
                                SYS_clock_gettime, SYS_gettimeofday, SYS_getpid, SYS_gettid};
    std::vector<sock_filter> f;
    auto stmt = [&](unsigned short code, unsigned k) { f.push_back(BPF_STMT(code, k)); };
    auto jump = [&](unsigned short code, unsigned k, unsigned char jt, unsigned char jf) {
        f.push_back(BPF_JUMP(code, k, jt, jf));
    };
    const unsigned ALLOW = SECCOMP_RET_ALLOW, TRAP = SECCOMP_RET_TRAP;
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
    jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
    for (unsigned nr : allowed) {
        jump(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
        stmt(BPF_RET | BPF_K, ALLOW);
    }
    // mmap: a fresh mapping only (MAP_FIXED / MAP_FIXED_NOREPLACE would replace or pin an address)
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[3]));
    jump(BPF_JMP | BPF_JSET | BPF_K, MAP_FIXED | MAP_FIXED_NOREPLACE, 0, 1);
    stmt(BPF_RET | BPF_K, TRAP);
    stmt(BPF_RET | BPF_K, ALLOW);
    // mprotect: the __shared__ pages only (race tracing protects and unprotects them)
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 6);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
    jump(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)smem, 0, 3);
    stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]) + 4);
    jump(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)(smem >> 32), 0, 1);
    stmt(BPF_RET | BPF_K, ALLOW);
    stmt(BPF_RET | BPF_K, TRAP);
    stmt(BPF_RET | BPF_K, TRAP);  // every other call
    sock_fprog prog{(unsigned short)f.size(), f.data()};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
        fault("resources", 0, "cannot install the executor's system-call filter (seccomp): %s", strerror(errno));
}

static void write_all(int fd, const char* p, size_t n) {
    while (n) {
        const ssize_t k = write(fd, p, n);
        if (k <= 0) fault("launcher", 0, "cannot write an output buffer");
        p += k;
        n -= (size_t)k;
    }
}

// `runner DIR SCHEDULE TRACE`: one launch in one thread order, asked by the parent (grader/instrument/cuda_cpu.py),
// which runs each order in a process of its own and compares their outputs itself. No code of the learner's file
// runs before this main (its object has no constructor: cuda_cpu.py refuses one) nor after it (_exit: no atexit
// handler, no destructor); everything is read and set up before install_limits(), then the kernel runs.
int main(int argc, char** argv) {
    if (argc != 4) return 2;
    page = (size_t)sysconf(_SC_PAGESIZE);
    const std::string dir = argv[1];
    cfg.schedule = atoi(argv[2]) ? 1 : 0;
    cfg.trace = atoi(argv[3]) != 0;
    proto = stdout;
    stdout = fopencookie(nullptr, "w", cookie_io_functions_t{nullptr, kernel_write, nullptr, nullptr});
    if (!stdout) stdout = fopen("/dev/null", "w");
    // buffers of our own: a stream allocates its buffer on first use with fstat, which the limits refuse
    static char proto_buf[1 << 14], out_buf[1 << 14];
    setvbuf(proto, proto_buf, _IOLBF, sizeof proto_buf);
    setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
    FILE* req = fopen((dir + "/request").c_str(), "r");
    if (!req) return 2;
    char name[256];
    unsigned g[3], b[3], seconds;
    unsigned long long shared_bytes;
    if (fscanf(req, "%255s %u %u %u %u %u %u %u %llu", name, &g[0], &g[1], &g[2], &b[0], &b[1], &b[2], &seconds,
               &shared_bytes) != 9)
        return 2;
    for (auto& d : dynamic_shared())
        if (shared_bytes > d.second)
            fault("resources", 0, "%llu bytes of dynamic shared memory asked; the CPU executor has %zu", shared_bytes,
                  d.second);
    const dripstone::Entry* k = dripstone_kernels;
    while (k->name && strcmp(k->name, name) != 0) ++k;
    if (!k->name) fault("launcher", 0, "no kernel `%s` in the file", name);
    const std::string signature = k->signature;
    std::vector<unsigned long long> args;
    std::string kinds;
    char kind[8];
    unsigned long long v;
    while (fscanf(req, "%7s %llu", kind, &v) == 2) {
        kinds += kind[0];
        if (kind[0] == 'p') {
            buffers.emplace_back();
            buffers.back().bytes = v;
            buffers.back().param = kinds.size() - 1;
            buffers.back().input = read_file(dir + "/in" + std::to_string(buffers.size() - 1) + ".bin");
            args.push_back(buffers.size() - 1);
        } else {
            args.push_back(v);
        }
    }
    fclose(req);
    for (size_t i = 0; i < kinds.size() && i < signature.size(); ++i) {
        if (kinds[i] != 'f') continue;  // a float argument comes as a double's bits: give each parameter its type
        double d;
        memcpy(&d, &args[i], 8);
        if (signature[i] == 'd') {
            kinds[i] = 'd';
        } else {
            const float f = (float)d;
            unsigned bits;
            memcpy(&bits, &f, 4);
            args[i] = bits;
        }
    }
    if (kinds != signature)
        fault("launcher", 0, "kernel `%s` takes (%s) but the test passes (%s) (p: pointer, i: integer, f: float, d: double)", name,
              signature.c_str(), kinds.c_str());
    const int nthreads = (int)(b[0] * b[1] * b[2]);
    if (nthreads < 1 || nthreads > 1024) fault("launcher", 0, "a block of %d threads (1 to 1024 on a GPU)", nthreads);
    fibers.resize(nthreads);
    for (int i = 0; i < nthreads; ++i) {
        fibers[i].tid = {(unsigned)(i % b[0]), (unsigned)(i / b[0] % b[1]), (unsigned)(i / (b[0] * b[1]))};
        alloc_stack(fibers[i]);
    }
    gridDim = dim3(g[0], g[1], g[2]);
    blockDim = dim3(b[0], b[1], b[2]);
    running = k;
    if (cfg.schedule == 0 && !cfg.trace)
        kout.fd = open((dir + "/printf.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    kout.on = kout.fd >= 0;
    std::vector<int> outs;
    for (size_t p = 0; p < buffers.size(); ++p) {
        outs.push_back(open((dir + "/out" + std::to_string(p) + ".bin").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
        if (outs.back() < 0) fault("launcher", 0, "cannot create the output files in %s", dir.c_str());
    }
    std::vector<unsigned long long> call = args;
    for (size_t i = 0, p = 0; i < kinds.size(); ++i)
        if (kinds[i] == 'p') {
            place(buffers[p], cfg.schedule);
            call[i] = (unsigned long long)buffers[p++].data;
        }
    slots = call.data();
    words.reserve((__stop_dripstone_smem - __start_dripstone_smem) / 4 + 1);
    warp_epoch.reserve((nthreads + 31) / 32);
    fflush(proto);
    install_handlers(seconds);
    install_limits();
    for (unsigned z = 0; z < g[2]; ++z)
        for (unsigned y = 0; y < g[1]; ++y)
            for (unsigned x = 0; x < g[0]; ++x) {
                blockIdx = {x, y, z};
                poison_shared();
                if (cfg.trace) {
                    block_epoch = 0;
                    warp_epoch.assign((nthreads + 31) / 32, 0);
                    words.assign((__stop_dripstone_smem - __start_dripstone_smem) / 4 + 1, Word{});
                }
                run_block(nthreads);
            }
    fflush(stdout);
    kout.on = false;
    for (size_t p = 0; p < buffers.size(); ++p) write_all(outs[p], buffers[p].data, buffers[p].bytes);
    fprintf(proto, "OK\n");
    fflush(proto);
    _exit(0);
}
