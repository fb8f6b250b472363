// Who holds malloc'd memory in a node process (issue 15): an LD_PRELOAD library that samples one allocation in
// SAMPLE with its call stack and forgets it when freed. `touch /tmp/mtrace-dump-<pid>` makes it write the live
// sampled blocks grouped by stack, biggest first, to /tmp/mtrace-<pid>-<n>.txt (a thread checks once a second).
// `node dist/bench/malloc-trace-diff.js before.txt after.txt` then says which stacks grew, with the frames in
// shared objects that carry symbols (sdk-core's index.node does) named through addr2line.
// A diagnostic, not part of Herald: build it by hand (needs gcc):
//   gcc -O2 -shared -fPIC -o /tmp/malloc-trace.so bench/malloc-trace/malloc-trace.c -ldl -lpthread
//   node dist/bench/memory.js 10000 --env=LD_PRELOAD=/tmp/malloc-trace.so   (then touch the trigger now and then)
// Its own tables are mmap'd and count in the process's RSS: read the process's memory figures from a run without it.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <malloc.h>

#define DEPTH 14
#define TABLE (1u << 23)
#define STACKS (1u << 18)
#define SAMPLE 8

typedef struct { uintptr_t ptr; uint32_t size; uint32_t stack; } Slot;
typedef struct { uint64_t hash; void *frames[DEPTH]; int depth; } Stack;

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static Slot *slots;
static Stack *stacks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int in_hook;
static char boot[1 << 16];
static size_t boot_used;
static uint64_t counter;
static int ready;

static void init(void) {
  static int initializing;
  if (real_malloc || initializing) return;
  initializing = 1;
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_free = dlsym(RTLD_NEXT, "free");
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
  real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
  real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  real_memalign = dlsym(RTLD_NEXT, "memalign");
  slots = mmap(0, sizeof(Slot) * TABLE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  stacks = mmap(0, sizeof(Stack) * STACKS, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  initializing = 0;
}

static uint32_t stack_id(void) {
  void *frames[DEPTH + 2];
  int n = backtrace(frames, DEPTH + 2);
  uint64_t h = 1469598103934665603ull;
  for (int i = 2; i < n; i++) h = (h ^ (uintptr_t)frames[i]) * 1099511628211ull;
  uint32_t i = (uint32_t)(h % STACKS);
  for (;;) {
    if (stacks[i].hash == 0) {
      stacks[i].hash = h;
      stacks[i].depth = n - 2;
      memcpy(stacks[i].frames, frames + 2, sizeof(void *) * (n - 2));
      return i;
    }
    if (stacks[i].hash == h) return i;
    i = (i + 1) % STACKS;
  }
}

static void track(void *p, size_t size) {
  if (!p || !ready || in_hook) return;
  if ((__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) % SAMPLE) != 0) return;
  in_hook = 1;
  pthread_mutex_lock(&lock);
  uint32_t s = stack_id();
  uint32_t i = (uint32_t)(((uintptr_t)p >> 4) % TABLE);
  while (slots[i].ptr && slots[i].ptr != (uintptr_t)p) i = (i + 1) % TABLE;
  slots[i].ptr = (uintptr_t)p; slots[i].size = (uint32_t)size; slots[i].stack = s;
  pthread_mutex_unlock(&lock);
  in_hook = 0;
}

static void untrack(void *p) {
  if (!p || !ready) return;
  pthread_mutex_lock(&lock);
  uint32_t i = (uint32_t)(((uintptr_t)p >> 4) % TABLE);
  while (slots[i].ptr) {
    if (slots[i].ptr == (uintptr_t)p) {
      // backward-shift deletion for linear probing
      uint32_t j = i;
      for (;;) {
        j = (j + 1) % TABLE;
        if (!slots[j].ptr) break;
        uint32_t k = (uint32_t)((slots[j].ptr >> 4) % TABLE);
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) { slots[i] = slots[j]; i = j; }
      }
      slots[i].ptr = 0;
      break;
    }
    i = (i + 1) % TABLE;
  }
  pthread_mutex_unlock(&lock);
}

static int is_boot(void *p) { return (char *)p >= boot && (char *)p < boot + sizeof boot; }

void *malloc(size_t n) { if (!real_malloc) { init(); if (!real_malloc) { void *p = boot + boot_used; boot_used += (n + 15) & ~15; return p; } } void *p = real_malloc(n); track(p, n); return p; }
void *calloc(size_t a, size_t b) { if (!real_calloc) { init(); if (!real_calloc) { void *p = boot + boot_used; boot_used += (a * b + 15) & ~15; memset(p, 0, a * b); return p; } } void *p = real_calloc(a, b); track(p, a * b); return p; }
void free(void *p) { if (!p || is_boot(p)) return; untrack(p); real_free(p); }
void *realloc(void *p, size_t n) { if (is_boot(p)) { void *q = malloc(n); memcpy(q, p, n); return q; } if (!real_realloc) init(); if (p) untrack(p); void *q = real_realloc(p, n); track(q, n); return q; }
int posix_memalign(void **out, size_t a, size_t n) { if (!real_posix_memalign) init(); int r = real_posix_memalign(out, a, n); if (!r) track(*out, n); return r; }
void *aligned_alloc(size_t a, size_t n) { if (!real_aligned_alloc) init(); void *p = real_aligned_alloc(a, n); track(p, n); return p; }
void *memalign(size_t a, size_t n) { if (!real_memalign) init(); void *p = real_memalign(a, n); track(p, n); return p; }

typedef struct { uint32_t stack; uint64_t bytes; uint64_t count; } Agg;
static int cmp(const void *a, const void *b) { const Agg *x = a, *y = b; return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0; }

static void dump(const char *path) {
  in_hook = 1;
  pthread_mutex_lock(&lock);
  static Agg agg[STACKS];
  memset(agg, 0, sizeof agg);
  uint64_t total = 0;
  for (uint32_t i = 0; i < TABLE; i++) if (slots[i].ptr) { agg[slots[i].stack].stack = slots[i].stack; agg[slots[i].stack].bytes += slots[i].size; agg[slots[i].stack].count++; total += slots[i].size; }
  pthread_mutex_unlock(&lock);
  qsort(agg, STACKS, sizeof(Agg), cmp);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char line[1024];
  int len = snprintf(line, sizeof line, "sampled live bytes x%d: %llu\n", SAMPLE, (unsigned long long)total * SAMPLE);
  write(fd, line, len);
  for (int k = 0; k < 60 && agg[k].bytes; k++) {
    len = snprintf(line, sizeof line, "\n== %llu bytes (x%d) in %llu blocks\n", (unsigned long long)agg[k].bytes * SAMPLE, SAMPLE, (unsigned long long)agg[k].count * SAMPLE);
    write(fd, line, len);
    Stack *s = &stacks[agg[k].stack];
    for (int f = 0; f < s->depth; f++) {
      Dl_info info;
      if (dladdr(s->frames[f], &info) && info.dli_fname) {
        len = snprintf(line, sizeof line, "  %p %s+0x%lx (%s +0x%lx)\n", s->frames[f], info.dli_sname ? info.dli_sname : "?", info.dli_saddr ? (unsigned long)((char *)s->frames[f] - (char *)info.dli_saddr) : 0UL, info.dli_fname, (unsigned long)((char *)s->frames[f] - (char *)info.dli_fbase));
      } else len = snprintf(line, sizeof line, "  %p\n", s->frames[f]);
      write(fd, line, len);
    }
  }
  close(fd);
  in_hook = 0;
}

static void *watcher(void *arg) {
  (void)arg;
  in_hook = 1;
  for (int n = 0;; ) {
    sleep(1);
    char trigger[64];
    snprintf(trigger, sizeof trigger, "/tmp/mtrace-dump-%d", getpid());
    if (access(trigger, F_OK) == 0) {
      unlink(trigger);
      char path[64];
      snprintf(path, sizeof path, "/tmp/mtrace-%d-%d.txt", getpid(), n++);
      dump(path);
    }
  }
  return 0;
}

__attribute__((constructor)) static void start(void) {
  init();
  { void *f[2]; backtrace(f, 2); } // loads libgcc_s before tracking starts
  ready = 1;
  pthread_t t;
  in_hook = 1;
  pthread_create(&t, 0, watcher, 0);
  in_hook = 0;
}
