// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz: a seeded random walk through the whole accmap uAPI, from several
 * threads at once, with a result oracle for every call.
 *
 * What it does
 *   Every ioctl of <linux/accmap.h> (the replay ones on the "sim" target
 *   included), mmap/munmap/touch of accmap dma-bufs and of /dev/accmap at
 *   a buffer's offset (MAP_OFFSET), DMA_BUF_IOCTL_SYNC,
 *   FROM_FD of accmap and of foreign dma-bufs (vgem, /dev/dma_heap/system,
 *   /dev/udmabuf: each used when the kernel has it), FROM_VA of user
 *   ranges of every kind (writable, read-only, PROT_NONE, shared memfd,
 *   PFN mappings of dma-bufs, the NULL page, kernel addresses), fork()
 *   (the child does a few ops on the inherited client, some with
 *   CAP_SYS_RAWIO dropped), dma-buf fds passed over a unix socket to a
 *   helper process that imports, maps and frees them (and passes its own
 *   back), closes of dma-buf fds and of /dev/accmap itself, SVM attribute
 *   changes and page replacement under a mirror, compute jobs of the
 *   model (MATMUL, VADD; inputs from the thread's generator) on the private
 *   client over its buffers and over the thread's own memory in an SVM
 *   session, raced by FREE, munmap, page replacement, MADV_DONTNEED and
 *   SVM SET_ATTR, and ACCMAP_IOC_CHECKPOINT:
 *   STATE of every client (racing CREATE, FREE, SET_ATTR and munmap in other
 *   threads), DMABUF of every kind of fd, whole restores of the private
 *   client into fresh files (BEGIN, CLIENT, BUFFER with ids and dma-bufs,
 *   SESSION, RESTORE_OFFSET and mmap through the restore's right, FINISH
 *   of this process and of one that did not join), and every op from a
 *   thread without CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN.  Arguments are
 *   valid ones with boundary and bad values mixed in (0, 1, page - 1,
 *   page, page + 1, U32_MAX, U64_MAX, the RAM size, huge sizes, bad flags
 *   and padding, stale and foreign ids, misaligned offsets, pointers to
 *   NULL, unmapped, PROT_NONE or read-only memory, structs that are
 *   too short, too long, or straddle an unmapped page, wrong commands).
 *
 * Oracles
 *   - every result is 0 or an errno the uAPI documentation lists for that
 *     call and that argument; an argument that breaks a documented rule
 *     must fail, with the errno of one of its faults;
 *   - each thread owns a private client whose state it models exactly:
 *     there the result is predicted (which id exists, has memory, is
 *     read-only, how big it is, which replay sessions live), outputs are
 *     compared with the model, fresh buffers must read as zero, what is
 *     written must read back, FROM_VA buffers must share the user pages,
 *     and fdinfo's handle count must match; its checkpoint STATE holds
 *     exactly the ids and sessions of the model;
 *   - a shadow of the contents of each of its buffers that only its
 *     thread can write (up to FZ_SMALL_PAGES; from the allocation on,
 *     through every WRITE) is compared with READ, with the buffer's
 *     /dev/accmap mapping and its new dma-buf's mapping as they are made
 *     (the buffer is shared from then on), after each cache operation
 *     (an invalidate of a cached buffer on a non-coherent CPU ends the
 *     shadow) and from a forked child through the inherited file; a WRITE
 *     that failed, by injection or not, must have copied nothing unless
 *     it failed with EFAULT (then the shadow ends);
 *   - the shared clients, on which all threads race, are checked against
 *     what cannot change under a race (ids are never reused, a buffer's
 *     size and access never change, memory once allocated stays), and
 *     their STATE holds together whatever races it: sizes add up, ids
 *     ascend below the next id and match the records, every SVM
 *     session's attribute ranges tile its range;
 *   - a restore gives back what was dumped (sizes, contents, dma-bufs of
 *     the right mode), maps only with the right it was given and only
 *     until FINISH, and FINISH acts only on a process that joined;
 *   - outputs on failure (REPLAY_SETUP failed_map, REPLAY_RUN reason /
 *     failed_op / done, CACHE_LIST done) follow the documented rules;
 *   - a compute job's C is what the CPU computes for its inputs
 *     (simdrv_reference()), its status DONE, and nothing else of its
 *     buffers changes (their shadows, with what the job wrote, are
 *     compared with READ whole; A and B in SVM memory stay), whatever
 *     raced it: FREE of a buffer it does not use or of its input
 *     buffer's id (the session keeps the memory), munmap (a PROT_NONE
 *     mapping in the page's place), a fresh mapping or MADV_DONTNEED of
 *     a page of its SVM range it does not use, SVM SET_ATTR that leaves
 *     it the access it needs.  A page of its inputs unmapped while it
 *     runs gives that, or EIO with
 *     ACCMAP_REPLAY_MMU_FAULT, a read translation fault inside the page
 *     in its address space, and nothing written;
 *   - where injection failed a call of the job ops (REPLAY_SETUP, RUN,
 *     DESTROY), the call's documented all-or-nothing rule holds, rather
 *     than the model adopting the kernel's state: a failed SETUP left no
 *     session (the private client's STATE), a failed RUN ran nothing
 *     (ENOMEM) or nothing or all of its list (EFAULT; the model's
 *     registers say which) and a job it never started wrote nothing, a
 *     wait that failed with ENOMEM took no interrupt, a DESTROY that
 *     failed with EFAULT destroyed nothing;
 *   - touching a mapping never faults, except writing a read-only one,
 *     which must (SIGSEGV, caught per thread with sigsetjmp);
 *   - after each seed, with every fd closed and every child reaped, the
 *     process holds as many fds as before and debugfs clients, handles,
 *     allocations, orphans, heap bytes used and replay totals are back to
 *     what they were before the seed.
 *   The VM harness adds the kernel's own checkers (KASAN, lockdep, ...).
 *
 * Running it
 *   fuzz [--seed S] [--seeds K] [--ops N] [--threads T] [--min-ops M]
 *   Environment: ACCMAP_FUZZ_SEED, ACCMAP_FUZZ_SEEDS, ACCMAP_FUZZ_OPS,
 *   ACCMAP_FUZZ_THREADS, ACCMAP_FUZZ_MIN_OPS (the options win).
 *   By default K seeds from a random base, N ops each; --seed S runs seeds
 *   S to S + K - 1 (K is 1 then unless given).  One TAP result per seed,
 *   each printing "replay: fuzz --seed S --ops N --threads T", its op
 *   rate, how often each kind of op ran (and how far the restores got,
 *   step by step), how many reads were compared with a contents shadow,
 *   how many job results were compared with the CPU's and what raced the
 *   jobs, and the errnos seen; then one result "total operations >= MIN",
 *   which also prints the op mix of all seeds, per kind of op the calls
 *   whose result injection may have made (the kernel's own count of
 *   injected failures is printed per seed), the shadow comparisons and
 *   the jobs'.
 *   MIN is 1000000 for a default run and the requested K * N when seeds
 *   or ops were given.
 *   A failure names the seed, the thread and the op index in that thread.
 *   Each thread draws from its own generator (seed, thread), so with
 *   --threads 1 a seed replays exactly; with more threads the op
 *   sequence of every thread replays, the interleaving does not.
 *
 * Cost
 *   Cheap calls (INFO, QUERY_*, bad arguments, small copies) make up most
 *   of the ops; allocations above 64 KiB, replay runs (waits of at most
 *   2 ms), mmaps, forks and fd passing are rarer, and compute jobs (a
 *   session set up and destroyed, two runs, at most 512 multiply-adds)
 *   rarer still.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <execinfo.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>

#include "accmap_util.h"
#include "simdrv.h"
#include "tap.h"
#include "vgem_util.h"

#ifndef fallthrough
#define fallthrough		__attribute__((__fallthrough__))
#endif
#define BIT(n)			(1U << (n))
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

#define FZ_DEFAULT_SEEDS	8
#define FZ_DEFAULT_OPS		131072
#define FZ_DEFAULT_THREADS	4
#define FZ_DEFAULT_MIN_OPS	1000000ULL
/* With injection, a run of the default size must also inject this many failures. */
#define FZ_DEFAULT_MIN_INJECTED	10000ULL
#define FZ_MAX_THREADS		16
#define FZ_MAX_SEEDS		1024

/* Shared fd table: dma-bufs, foreign dma-bufs and the shared clients. */
#define FZ_FDS			96
#define FZ_DEVS			3	/* shared clients kept open */
#define FZ_REC_MAX		64	/* ids remembered per shared client */
#define FZ_SREC_MAX		12	/* sessions remembered per shared client */

/* Per thread. */
#define FZ_OWN_MAX		48	/* handles of the private client */
#define FZ_STALE_MAX		8	/* ids freed there, remembered */
#define FZ_SESS_MAX		64	/* a client's session limit */
#define FZ_SESS_KEEP		6	/* sessions kept live normally */
#define FZ_MAPS_MAX		8	/* live mmaps of dma-bufs */
#define FZ_VGEM_KEEP		4	/* vgem handles of imported buffers */
/* Most dma-bufs of one buffer the run can hold: fds, mmaps, vgem, kept ones. */
#define FZ_EXPORTS_MAX		(FZ_FDS + FZ_MAX_THREADS * (FZ_MAPS_MAX + FZ_VGEM_KEEP) + 2)
#define FZ_UBUF_PAGES		16	/* user memory for copies */
#define FZ_SCR_RW		12	/* FROM_VA scratch: anonymous, writable */
#define FZ_SCR_RO		4	/* ... read-only */
#define FZ_SCR_NONE		4	/* ... PROT_NONE */
#define FZ_SCR_SHM		8	/* ... shared memfd, writable */
#define FZ_SCR_PAGES		(FZ_SCR_RW + FZ_SCR_RO + FZ_SCR_NONE + FZ_SCR_SHM)
#define FZ_SCR_SHARED		8	/* writable pages for FROM_VA in shared clients */
#define FZ_OPS_MAX		4096	/* replay ops in one list, at most */
#define FZ_RMAPS_MAX		4096	/* replay maps in one setup, at most */

#define FZ_SMALL_PAGES		16	/* most buffers */
#define FZ_BIG_MAX		(16ULL << 20)
/* The largest contiguous ALLOC (the driver's ACCMAP_CONTIG_MAX_SIZE). */
#define FZ_CONTIG_MAX		(1024ULL << 20)
#define FZ_TAG_BASE		0xf000	/* tags used for labels and ALLOC */
#define FZ_TAGS			64
#define FZ_KERN_ADDR		0xffff900000000000ULL
#define FZ_WAIT_MAX_US		2000	/* longest replay wait */
#define FZ_SETTLE_MS		10000	/* to wait for debugfs after a seed */
#define FZ_CK_ROOM		(256U << 10)	/* room for one checkpoint state */
#define FZ_SVM_PAGES		32	/* the shared clients' SVM range */
#define FZ_JSVM_PAGES		8	/* a thread's own SVM memory, for its jobs */
#define FZ_JOB_DIM		8	/* a job's MATMUL sides, at most */
#define FZ_JOB_ELEMS		64	/* elements of a job's matrix, at most */
#define FZ_JOB_WAIT_US		5000000	/* for a job's end, at most */

/* The software Mali model, as Documentation/userspace-api/accmap-sim.rst has it. */
#define SIM_NAME		"sim"
#define SIM_WINDOW		0x4000
#define SIM_AS_COUNT		8
#define SIM_GPU_ID		0x60a00002U
#define SIM_JS_COUNT		3
#define MALI_AS(n)		(0x2400 + (n) * 0x40)
#define MALI_JS(n)		(0x1800 + (n) * 0x80)
#define MALI_AS_BLOCKS		16
#define TRANSCFG_LEGACY		0x0
#define TRANSCFG_UNMAPPED	0x1
#define TRANSCFG_IDENTITY	0x2
#define TRANSCFG_AARCH64_4K	0x6
/* TRANSCFG_LO: what a session may set besides the mode (the kernel's rules). */
#define TRANSCFG_INA_MASK	(0x1fU << 6)
#define TRANSCFG_INA_48		(7U << 6)
#define TRANSCFG_POLICY		(3U << 24 | 3U << 28 | 1U << 30)
#define PRFCNT_CONFIG		0x0068

#define GPU_PAGE		4096ULL
#define NO_INDEX		0xffffffffU

/* Tri-state knowledge of the kernel's state. */
#define NO			0
#define YES			1
#define MAYBE			2

/*
 * A set of results: bit 0 is success, bit e errno e (all the errnos the
 * uAPI uses are below 128 on every architecture Linux has).
 */
#define RES_OK			((__uint128_t)1)
#define RES_E(e)			((__uint128_t)1 << (e))

static const char *const errno_names[128] = {
	[EPERM] = "EPERM", [ENOENT] = "ENOENT", [ESRCH] = "ESRCH", [EINTR] = "EINTR", [EIO] = "EIO",
	[E2BIG] = "E2BIG", [EBADF] = "EBADF", [EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM",
	[EACCES] = "EACCES", [EFAULT] = "EFAULT", [EBUSY] = "EBUSY", [EEXIST] = "EEXIST",
	[EXDEV] = "EXDEV", [ENODEV] = "ENODEV", [EINVAL] = "EINVAL", [ENFILE] = "ENFILE",
	[EMFILE] = "EMFILE", [ENOTTY] = "ENOTTY", [ENOSPC] = "ENOSPC", [ERANGE] = "ERANGE",
	[ENODATA] = "ENODATA", [EOVERFLOW] = "EOVERFLOW", [EOPNOTSUPP] = "EOPNOTSUPP",
	[ETIMEDOUT] = "ETIMEDOUT", [ETOOMANYREFS] = "ETOOMANYREFS", [ENOBUFS] = "ENOBUFS",
};

/* ---- configuration and results shared with the TAP runner ---- */

struct fz_config {
	uint64_t seeds[FZ_MAX_SEEDS];
	unsigned int nseeds;
	uint64_t ops;
	unsigned int threads;
	uint64_t min_ops;
	uint64_t min_injected;
	unsigned int inject;	/* FZ_INJECT_*: which seeds inject failures */
};

static struct fz_config cfg;

enum { FZ_INJECT_NONE, FZ_INJECT_HALF, FZ_INJECT_ALL };

/* In a MAP_SHARED page: every seed's child reports here. */
struct fz_shared {
	unsigned int next_seed;
	uint64_t total_ops;
	uint64_t injected;	/* failures the kernel injected, all seeds */
	uint64_t sh_checks;	/* reads compared with a contents shadow, all seeds */
	uint64_t ops[64];	/* ops done per kind (enum fz_op), all seeds */
	uint64_t inj_calls[64];	/* calls injection may have failed, per kind of op */
	uint64_t jobs[8];	/* enum fz_jobstat, all seeds */
	uint64_t job_races[16];	/* jobs per race (enum fz_jrace), all seeds */
};

static struct fz_shared *fz_sh;

/* ---- kinds of ops ---- */

enum fz_op {
	OP_INFO, OP_BADCMD, OP_QHEAP, OP_QPOOL, OP_LABEL, OP_CREATE, OP_ALLOC, OP_FREE,
	OP_RW, OP_VERIFY, OP_CACHE, OP_CLIST, OP_GETFD, OP_FROMFD, OP_CLOSEFD, OP_SYNC,
	OP_MMAP, OP_TOUCH, OP_MUNMAP, OP_FROMVA, OP_RQUERY, OP_RSETUP, OP_RRUN,
	OP_RDESTROY, OP_FOREIGN, OP_VGEM, OP_SEND, OP_RECV, OP_FORK, OP_REOPEN,
	OP_FDINFO, OP_BIG, OP_MAPOFF, OP_CKSTATE, OP_CKDMABUF, OP_CKRESTORE, OP_CKSVM,
	OP_CKNOPERM, OP_JOB, OP_SVMJOB, OP_COUNT
};

static_assert(OP_COUNT <= 64, "struct fz_shared counts 64 kinds of op");

/* What the job ops (OP_JOB, OP_SVMJOB) count. */
enum fz_jobstat {
	JOBS_COMPARED,		/* results compared with the CPU's */
	JOBS_FAULTED,		/* stopped by a fault on memory a race unmapped */
	JOBS_UNRUN,		/* kept from running by an injected failure */
	JOBS_INJ,		/* injected failures checked all or nothing */
	JOBS_OVERLAP,		/* races over while the job still ran */
	JOBS_COUNT
};

/* What happens while a job runs. */
enum fz_jrace {
	JR_NONE, JR_FREE_OTHER, JR_FREE_INPUT, JR_MUNMAP_OTHER, JR_REPLACE_OTHER,
	JR_DONTNEED_OTHER, JR_ATTR_OTHER, JR_ATTR_OWN, JR_MUNMAP_OWN, JR_COUNT
};

static_assert(JOBS_COUNT <= 8 && JR_COUNT <= 16, "the job counters' room");

static const char *const fz_jrace_names[JR_COUNT] = {
	[JR_NONE] = "none", [JR_FREE_OTHER] = "free_other", [JR_FREE_INPUT] = "free_input",
	[JR_MUNMAP_OTHER] = "munmap_other", [JR_REPLACE_OTHER] = "replace_other",
	[JR_DONTNEED_OTHER] = "dontneed_other", [JR_ATTR_OTHER] = "attr_other",
	[JR_ATTR_OWN] = "attr_own", [JR_MUNMAP_OWN] = "munmap_own",
};

/* The checkpoint ops, counted together in the op mix. */
#define OP_CK_FIRST		OP_CKSTATE
#define OP_CK_LAST		OP_CKNOPERM

/* Where a restore got to, counted per step for the op mix. */
enum {
	CKS_BEGIN, CKS_CLIENT, CKS_BUFFER, CKS_FD, CKS_SESSION, CKS_OFFSET, CKS_MMAP,
	CKS_FINISH, CKS_FOREIGN_PID, CKS_COUNT
};

static const char *const fz_ck_step_names[CKS_COUNT] = {
	[CKS_BEGIN] = "begin", [CKS_CLIENT] = "client", [CKS_BUFFER] = "buffer",
	[CKS_FD] = "fd", [CKS_SESSION] = "session", [CKS_OFFSET] = "offset",
	[CKS_MMAP] = "mmap", [CKS_FINISH] = "finish", [CKS_FOREIGN_PID] = "finish_eperm",
};

struct fz_thread;

struct fz_opdesc {
	const char *name;
	unsigned int weight;	/* in 100000 ops, roughly */
	bool (*fn)(struct fz_thread *t);
};

static const struct fz_opdesc fz_ops[OP_COUNT];

/* ---- state of one seed (in the seed's own process) ---- */

enum fz_fd_kind { FD_NONE, FD_DEV, FD_BUF, FD_FOREIGN };

/* An id a shared client handed out, and what cannot change about it. */
struct fz_rec {
	bool used;
	uint32_t id;
	uint64_t size;
	bool alloc;		/* known to have memory (it keeps it) */
	bool readonly;
};

/* A session of a shared client. */
struct fz_srec {
	bool used;
	uint32_t session;
	uint32_t format;
	uint32_t as;
	struct accmap_replay_map map;	/* its first mapping */
};

/* A shared client: an open /dev/accmap that every thread uses. */
struct fz_client {
	pthread_mutex_t lock;	/* protects rec and srec */
	struct fz_rec rec[FZ_REC_MAX];
	struct fz_srec srec[FZ_SREC_MAX];
	uint32_t svm_session;	/* its session mirroring env.svm, 0 if none known */
};

/*
 * An fd of the table.  A thread uses one only while it holds a claim
 * (users); closing waits for the last claim, so that a number closed and
 * handed out again can never reach a thread that still meant the old one.
 */
struct fz_fd {
	int fd;			/* -1: free slot */
	enum fz_fd_kind kind;
	int users;
	bool closing;
	uint64_t size;		/* dma-buf size */
	bool rdonly;		/* dma-buf opened O_RDONLY */
	char origin;		/* FD_FOREIGN: 'v'gem, dma-'h'eap, 'u'dmabuf */
	struct fz_client *client;	/* FD_DEV */
};

static struct fz_fd fz_fds[FZ_FDS];
static pthread_mutex_t fz_fds_lock = PTHREAD_MUTEX_INITIALIZER;

/* Machine facts, found at the start of each seed. */
struct fz_env {
	uint64_t seed;
	size_t page;
	uint64_t ram;
	uint32_t heaps;		/* heap ids that exist */
	uint32_t alloc_heaps;	/* of them, those ALLOC may use */
	uint32_t dma32_heaps;	/* of those, the ones with memory below 4 GiB */
	uint32_t ntargets;
	uint32_t sim;		/* the sim's target index */
	int null_fd;		/* /dev/null, open for the whole seed */
	int vgem;		/* -1 when there is none */
	bool vgem_maps;		/* vgem maps an import as it imports it */
	int dma_heap;		/* /dev/dma_heap/system or -1 */
	int udmabuf;		/* /dev/udmabuf or -1 */
	int sock;		/* our end of the helper's socket */
	pid_t helper;
	uint8_t *svm;		/* the range the shared clients' SVM sessions mirror */
	size_t svm_len;
	int stop;		/* a failure: every thread stops (atomic) */
};

static struct fz_env env;

/* A buffer of the private client, as the thread knows it. */
struct fz_handle {
	uint32_t id;
	uint64_t size;
	bool alloc;
	bool known;		/* heap, flags and tag known */
	uint32_t heap;
	uint32_t flags;
	uint16_t tag;
	bool readonly;
	bool shared;		/* exported or in a session: others may write it */
	bool dirty;		/* written: no longer reads as zero */
	bool fromva;
	size_t va_page;		/* first scratch page, for FROM_VA */
	/*
	 * A shadow of the contents, exact while set: kept for a buffer
	 * of at most FZ_SMALL_PAGES that only this thread can write,
	 * from its allocation (zero) on, through every WRITE; dropped
	 * when a write the model does not follow byte by byte may have
	 * happened (sh_drop()).
	 */
	uint8_t *sh;
	/* The last events of the shadow, printed when it disagrees (sh_note()). */
	struct fz_shev {
		uint8_t what;	/* SHE_* */
		uint8_t op;	/* kind of op */
		int16_t ret;
		uint32_t off, len;
	} ev[8];
	unsigned int nev;
};

enum { SHE_START, SHE_WRITE, SHE_WRITE_FAILED, SHE_READ, SHE_CACHE, SHE_MAP, SHE_FORK, SHE_JOB };
static const char *const fz_she_names[] = {
	[SHE_START] = "start", [SHE_WRITE] = "write", [SHE_WRITE_FAILED] = "write-failed",
	[SHE_READ] = "read", [SHE_CACHE] = "cache-op", [SHE_MAP] = "map",
	[SHE_FORK] = "fork-read", [SHE_JOB] = "job-wrote",
};

/* A replay session of the private client. */
struct fz_sess {
	uint32_t id;
	uint32_t format;
	uint32_t as;
	struct accmap_replay_map map;
};

/* A live mmap of a dma-buf. */
struct fz_map {
	void *addr;
	size_t len;
	bool writable;
	bool accmap;
};

/* What a forked child reports, in memory shared with its parent. */
struct fz_child_report {
	int step;
	int err;
	long detail;
};

struct fz_thread {
	pthread_t thread;
	unsigned int idx;
	uint64_t rng;
	uint64_t target_ops;
	uint64_t nop;		/* ops done, and the index of the current one */
	uint64_t counts[OP_COUNT];
	uint64_t op_ns[OP_COUNT];	/* time spent in each kind of op */
	uint64_t errs[128];	/* results by errno (0: success) */
	enum fz_op cur;
	bool nowb;		/* last fz_ioctl: ran, result not written back */
	bool inj;		/* last fz_ioctl: failed by injection, may have run */
	bool inj_wb;		/* ... with ENOMEM, its result written back */
	int mif;		/* /proc/thread-self/make-it-fail, or -1 */

	int own;		/* the private client, or -1 */
	struct fz_handle h[FZ_OWN_MAX];
	unsigned int nh;
	uint32_t stale[FZ_STALE_MAX];
	unsigned int nstale;
	uint32_t max_id;	/* highest id the private client gave */
	struct fz_sess s[FZ_SESS_MAX];
	unsigned int ns;
	uint32_t stale_sess;

	struct fz_map maps[FZ_MAPS_MAX];
	unsigned int nmaps;
	uint32_t vgem_handles[FZ_VGEM_KEEP];
	unsigned int nvgem;

	uint8_t *arg;		/* 3 pages: read-write, read-only, PROT_NONE */
	uint8_t *ubuf;		/* FZ_UBUF_PAGES read-write, 1 read-only, 1 PROT_NONE */
	uint8_t *scr;		/* FROM_VA scratch, FZ_SCR_PAGES */
	uint8_t *tmp;		/* private bounce memory */
	struct accmap_replay_op *ops;
	struct accmap_replay_map *rmaps;
	struct fz_child_report *report;
	uint8_t *ck;		/* FZ_CK_ROOM bytes for checkpoint states */
	uint64_t sh_checks;	/* reads and mappings compared with a shadow */
	uint64_t inj_calls[OP_COUNT];	/* calls injection may have failed, per kind of op */
	bool ck_noalloc;	/* the checkpoint op under way allocates nothing */
	uint64_t ck_steps[CKS_COUNT];	/* restores, step by step */
	uint64_t ck_svm_states;	/* states checked with an SVM session's ranges */
	uint32_t ck_svm_ranges;	/* the most ranges one had */
	uint8_t *jsvm;		/* FZ_JSVM_PAGES of its own, for SVM jobs */
	uint64_t jobs[8];	/* enum fz_jobstat */
	uint64_t job_races[16];	/* jobs per race (enum fz_jrace) */
};

static struct fz_thread fz_threads[FZ_MAX_THREADS];

/* ---- random numbers ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct fz_thread *t)
{
	return splitmix(&t->rng);
}

/* Uniform in [0, n); n == 0 stands for 2^64. */
static uint64_t below(struct fz_thread *t, uint64_t n)
{
	return n ? rnd(t) % n : rnd(t);
}

/* True with probability 1 / n. */
static bool one_in(struct fz_thread *t, uint64_t n)
{
	return below(t, n) == 0;
}

/* Uniform in [lo, hi]. */
static uint64_t range(struct fz_thread *t, uint64_t lo, uint64_t hi)
{
	return lo + below(t, hi - lo + 1);
}

/* A value from the usual suspects of boundaries. */
static uint64_t boundary(struct fz_thread *t)
{
	switch (below(t, 14)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return env.page - 1;
	case 3:
		return env.page;
	case 4:
		return env.page + 1;
	case 5:
		return UINT32_MAX;
	case 6:
		return (uint64_t)UINT32_MAX + 1;
	case 7:
		return UINT64_MAX;
	case 8:
		return UINT64_MAX - env.page + 2;
	case 9:
		return 1ULL << 40;
	case 10:
		return env.ram;
	case 11:
		return env.ram + 1;
	case 12:
		return 1ULL << 63;
	default:
		return rnd(t);
	}
}

static uint32_t boundary32(struct fz_thread *t)
{
	switch (below(t, 6)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return UINT32_MAX;
	case 3:
		return 0x80000000U;
	case 4:
		return (uint32_t)below(t, 256);
	default:
		return (uint32_t)rnd(t);
	}
}

/* ---- results ---- */

static const char *ename(int e)
{
	static __thread char buf[24];

	if (e == 0)
		return "0";
	if (e > 0 && e < 128 && errno_names[e])
		return errno_names[e];
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static void set_names(__uint128_t set, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int e = 0; e < 128 && n < len; e++) {
		if (!(set & RES_E(e)))
			continue;
		n += snprintf(buf + n, len - n, "%s%s", n ? "," : "", e ? ename(e) : "ok");
	}
}

#define FZ_FAIL(t, ...)		fz_fail((t), __FILE__, __LINE__, __VA_ARGS__)

/*
 * Records a failure with the seed, the thread and its op index, and stops
 * the seed: one failure is enough to replay.
 */
__printf(4, 5)
static void fz_fail(struct fz_thread *t, const char *file, int line, const char *fmt, ...)
{
	char msg[360];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (t)
		tap_check(false, file, line, "seed %llu thread %u op %llu (%s): %s",
			  (unsigned long long)env.seed, t->idx, (unsigned long long)t->nop,
			  fz_ops[t->cur].name, msg);
	else
		tap_check(false, file, line, "seed %llu: %s", (unsigned long long)env.seed, msg);
	__atomic_store_n(&env.stop, 1, __ATOMIC_RELAXED);
}

/* Checks a result (0 or -errno) against a set; counts it. */
static bool fz_expect(struct fz_thread *t, const char *what, int ret, __uint128_t allowed)
{
	int e = -ret;
	char names[200];

	if (e >= 0 && e < 128) {
		t->errs[e]++;
		if (allowed & RES_E(e))
			return true;
	}
	set_names(allowed, names, sizeof(names));
	FZ_FAIL(t, "%s returned %s, allowed: %s", what, ename(e), names);
	return false;
}

/* ---- what a call may return: faults that are there, or may be ---- */

struct fz_exp {
	__uint128_t may;	/* errnos of faults that are or may be there */
	bool definite;		/* some fault is certainly there: no success */
};

static void exp_init(struct fz_exp *x)
{
	x->may = 0;
	x->definite = false;
}

/* A fault giving @err, present YES, NO or MAYBE. */
static void fault(struct fz_exp *x, int err, int tri)
{
	if (tri == NO)
		return;
	x->may |= RES_E(err);
	if (tri == YES)
		x->definite = true;
}

/* A fault present when @cond holds. */
static void fault_if(struct fz_exp *x, int err, bool cond)
{
	fault(x, err, cond ? YES : NO);
}

static __uint128_t exp_allowed(const struct fz_exp *x)
{
	return x->may | (x->definite ? 0 : RES_OK);
}

/* Both hold: YES only if both are YES, NO if either is NO. */
static int tri_and(int a, int b)
{
	if (a == NO || b == NO)
		return NO;
	if (a == YES && b == YES)
		return YES;
	return MAYBE;
}

static bool fz_stopped(void)
{
	return __atomic_load_n(&env.stop, __ATOMIC_RELAXED);
}

/*
 * Accesses to mapped buffers: aligned 64-bit words that the compiler may
 * neither drop nor merge nor split (uncached buffers are Device memory on
 * arm64: no unaligned or partial accesses there).
 */
static uint64_t word_load(const void *p)
{
	return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
}

static void word_store(void *p, uint64_t v)
{
	__atomic_store_n((uint64_t *)p, v, __ATOMIC_RELAXED);
}

/* ---- the fd table ---- */

static void fd_close_locked(struct fz_fd *e)
{
	close(e->fd);
	if (e->client) {
		pthread_mutex_destroy(&e->client->lock);
		free(e->client);
	}
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

/*
 * Claims a random live entry of @kind (FD_BUF also takes FD_FOREIGN when
 * @foreign); returns its index and a copy, or -1.
 */
static int fd_claim(struct fz_thread *t, enum fz_fd_kind kind, bool foreign, struct fz_fd *copy)
{
	unsigned int start = (unsigned int)below(t, FZ_FDS);
	int found = -1;

	pthread_mutex_lock(&fz_fds_lock);
	for (unsigned int i = 0; i < FZ_FDS; i++) {
		struct fz_fd *e = &fz_fds[(start + i) % FZ_FDS];

		if (e->fd < 0 || e->closing)
			continue;
		if (e->kind != kind && !(foreign && kind == FD_BUF && e->kind == FD_FOREIGN))
			continue;
		e->users++;
		*copy = *e;
		found = (int)((start + i) % FZ_FDS);
		break;
	}
	pthread_mutex_unlock(&fz_fds_lock);
	return found;
}

/*
 * The dma-buf fd an op names, in *@fd: a claimed slot's, with EXDEV
 * expected for another exporter's; -1, and EBADF expected, when the table
 * has none.  Returns the slot (to give back), or -1.
 */
static int claim_buf_fd(struct fz_thread *t, struct fz_exp *x, struct fz_fd *e, int *fd)
{
	int slot = fd_claim(t, FD_BUF, true, e);

	if (slot < 0) {
		*fd = -1;
		fault(x, EBADF, YES);
		return -1;
	}
	*fd = e->fd;
	fault_if(x, EXDEV, e->kind == FD_FOREIGN);
	return slot;
}

static void fd_release(int idx)
{
	struct fz_fd *e = &fz_fds[idx];

	pthread_mutex_lock(&fz_fds_lock);
	if (--e->users == 0 && e->closing)
		fd_close_locked(e);
	pthread_mutex_unlock(&fz_fds_lock);
}

/* Closes the entry once the last claim goes (now if there is none). */
static void fd_retire(int idx)
{
	struct fz_fd *e = &fz_fds[idx];

	pthread_mutex_lock(&fz_fds_lock);
	e->closing = true;
	if (e->users == 0)
		fd_close_locked(e);
	pthread_mutex_unlock(&fz_fds_lock);
}

/* Adds an fd the caller owns; closes it if the table is full.  Index or -1. */
static int fd_add(int fd, enum fz_fd_kind kind, uint64_t size, bool rdonly, char origin,
		  struct fz_client *client)
{
	int idx = -1;

	pthread_mutex_lock(&fz_fds_lock);
	for (unsigned int i = 0; i < FZ_FDS; i++) {
		struct fz_fd *e = &fz_fds[i];

		if (e->fd >= 0)
			continue;
		e->fd = fd;
		e->kind = kind;
		e->users = 0;
		e->closing = false;
		e->size = size;
		e->rdonly = rdonly;
		e->origin = origin;
		e->client = client;
		idx = (int)i;
		break;
	}
	pthread_mutex_unlock(&fz_fds_lock);
	if (idx < 0) {
		close(fd);
		if (client) {
			pthread_mutex_destroy(&client->lock);
			free(client);
		}
	}
	return idx;
}

static unsigned int fd_count(enum fz_fd_kind kind)
{
	unsigned int n = 0;

	pthread_mutex_lock(&fz_fds_lock);
	for (unsigned int i = 0; i < FZ_FDS; i++)
		n += fz_fds[i].fd >= 0 && !fz_fds[i].closing && fz_fds[i].kind == kind;
	pthread_mutex_unlock(&fz_fds_lock);
	return n;
}

/* Opens one more shared client. */
static bool dev_add(struct fz_thread *t)
{
	struct fz_client *c = calloc(1, sizeof(*c));
	int fd;

	if (!c) {
		FZ_FAIL(t, "out of memory");
		return false;
	}
	fd = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		FZ_FAIL(t, "open %s: %s", ACCMAP_DEV_PATH, strerror(errno));
		free(c);
		return false;
	}
	pthread_mutex_init(&c->lock, NULL);
	return fd_add(fd, FD_DEV, 0, false, 0, c) >= 0;
}

/* ---- the client of an op, and what is known of an id in it ---- */

struct fz_cl {
	int fd;
	int slot;		/* shared: fd table index; private: -1 */
	struct fz_client *c;	/* shared */
	bool priv;
};

/* The private client half the time, else a shared one (claimed). */
static bool cl_get(struct fz_thread *t, struct fz_cl *cl)
{
	struct fz_fd copy;

	memset(cl, 0, sizeof(*cl));
	cl->slot = -1;
	if (t->own < 0 || one_in(t, 2)) {
		cl->slot = fd_claim(t, FD_DEV, false, &copy);
		if (cl->slot >= 0) {
			cl->fd = copy.fd;
			cl->c = copy.client;
			return true;
		}
	}
	if (t->own < 0)
		return false;
	cl->fd = t->own;
	cl->priv = true;
	return true;
}

static void cl_put(struct fz_cl *cl)
{
	if (cl->slot >= 0)
		fd_release(cl->slot);
	cl->slot = -1;
}

struct fz_idk {
	uint32_t id;
	int exists;
	int alloc;		/* if it exists */
	int readonly;		/* if it exists */
	uint64_t size;		/* 0: unknown */
	struct fz_handle *h;	/* private: the model's entry */
	int rec;		/* shared: the record, or -1 */
};

static int tri_not(int a)
{
	return a == MAYBE ? MAYBE : !a;
}

static struct fz_handle *own_find(struct fz_thread *t, uint32_t id)
{
	for (unsigned int i = 0; i < t->nh; i++) {
		if (t->h[i].id == id)
			return &t->h[i];
	}
	return NULL;
}

static void idk_from_handle(struct fz_idk *k, struct fz_handle *h)
{
	k->id = h->id;
	k->h = h;
	k->exists = YES;
	k->alloc = h->alloc ? YES : NO;
	k->readonly = h->readonly ? YES : NO;
	k->size = h->size;
}

/* An id for an op; @want_alloc prefers ids that have memory. */
static void pick_id(struct fz_thread *t, struct fz_cl *cl, struct fz_idk *k, bool want_alloc)
{
	memset(k, 0, sizeof(*k));
	k->rec = -1;

	if (cl->priv && t->nh && !one_in(t, 5)) {
		struct fz_handle *h = &t->h[below(t, t->nh)];

		for (int i = 0; i < 3 && want_alloc && !h->alloc; i++)
			h = &t->h[below(t, t->nh)];
		idk_from_handle(k, h);
		return;
	}
	if (!cl->priv && !one_in(t, 4)) {
		unsigned int start = (unsigned int)below(t, FZ_REC_MAX);

		pthread_mutex_lock(&cl->c->lock);
		for (unsigned int i = 0; i < FZ_REC_MAX; i++) {
			struct fz_rec *r = &cl->c->rec[(start + i) % FZ_REC_MAX];

			if (!r->used || (want_alloc && !r->alloc && i < FZ_REC_MAX / 2))
				continue;
			k->id = r->id;
			k->rec = (int)((start + i) % FZ_REC_MAX);
			k->exists = MAYBE;	/* another thread may free it */
			k->alloc = r->alloc ? YES : MAYBE;
			k->readonly = r->readonly ? YES : NO;
			k->size = r->size;
			break;
		}
		pthread_mutex_unlock(&cl->c->lock);
		if (k->id)
			return;
	}

	/* Ids that name nothing, or that nobody here can know. */
	switch (below(t, 6)) {
	case 0:
		k->id = 0;
		break;
	case 1:
		k->id = UINT32_MAX;
		break;
	case 2:
		if (cl->priv)
			k->id = t->max_id + 1 + (uint32_t)below(t, 3);
		else
			k->id = (uint32_t)range(t, 1, 64);
		break;
	case 3:
		if (cl->priv && t->nstale) {
			k->id = t->stale[below(t, t->nstale)];
			break;
		}
		fallthrough;
	case 4:
		k->id = (uint32_t)range(t, 1, 4096);
		break;
	default:
		k->id = (uint32_t)rnd(t);
		break;
	}
	if (cl->priv) {
		struct fz_handle *h = own_find(t, k->id);

		if (h) {
			idk_from_handle(k, h);
			return;
		}
		k->exists = NO;
	} else {
		/* Ids start at 1 and only grow: 0 and U32_MAX are never handed out. */
		k->exists = (k->id == 0 || k->id == UINT32_MAX) ? NO : MAYBE;
	}
	k->alloc = MAYBE;
	k->readonly = MAYBE;
}

/* The errnos of looking @k up: ENOENT, and ENODATA if @need_alloc. */
static void fault_id(struct fz_exp *x, const struct fz_idk *k, bool need_alloc)
{
	fault(x, ENOENT, tri_not(k->exists));
	if (need_alloc)
		fault(x, ENODATA, tri_and(k->exists, tri_not(k->alloc)));
}

/* Whether @end (bytes) lies beyond the buffer of @k. */
static int tri_beyond(const struct fz_idk *k, uint64_t end)
{
	if (!k->size)
		return tri_and(k->exists, MAYBE);
	return tri_and(k->exists, end > k->size ? YES : NO);
}

/* ---- the private client's model ---- */

static struct fz_handle *own_add(struct fz_thread *t, uint32_t id, uint64_t size)
{
	struct fz_handle *h;

	if (!id || own_find(t, id)) {
		FZ_FAIL(t, "new id %u is 0 or already held", id);
		return NULL;
	}
	if (t->nh >= FZ_OWN_MAX) {
		FZ_FAIL(t, "model full");
		return NULL;
	}
	h = &t->h[t->nh++];
	memset(h, 0, sizeof(*h));
	h->id = id;
	h->size = size;
	h->heap = ACCMAP_HEAP_NONE;
	h->known = true;
	if (id > t->max_id)
		t->max_id = id;
	return h;
}

/* The contents shadow of @h, begun now if @h is a fresh buffer only this thread writes. */
static uint8_t *sh_get(struct fz_handle *h)
{
	if (h->sh || !h->alloc || h->shared || h->dirty || h->fromva || !h->size ||
	    h->size > FZ_SMALL_PAGES * env.page)
		return h->sh;
	h->sh = calloc(1, h->size);
	h->nev = 0;
	return h->sh;
}

static void sh_note(struct fz_thread *t, struct fz_handle *h, unsigned int what, int ret,
		    uint64_t off, uint64_t len)
{
	h->ev[h->nev++ % 8] = (struct fz_shev){ .what = (uint8_t)what, .op = (uint8_t)t->cur,
						.ret = (int16_t)ret, .off = (uint32_t)off,
						.len = (uint32_t)len };
}

/* What happened to @h's shadow lately, oldest first. */
static void sh_history(const struct fz_handle *h)
{
	for (unsigned int i = h->nev > 8 ? h->nev - 8 : 0; i < h->nev; i++) {
		const struct fz_shev *e = &h->ev[i % 8];

		tap_diag("  shadow of id %u, event %u: %s in %s, %s %s, offset %u, %u bytes",
			 h->id, i, fz_she_names[e->what], fz_ops[e->op].name,
			 e->what == SHE_CACHE ? "cache op" : "result",
			 e->what == SHE_CACHE ? ename(e->ret) : e->ret ? ename(-e->ret) : "ok",
			 e->off, e->len);
	}
}

/* @h's contents are no longer known byte by byte (dirty is set: no new zero shadow). */
static void sh_drop(struct fz_handle *h)
{
	free(h->sh);
	h->sh = NULL;
	h->dirty = true;
}

/* Others may write @h from now on (an export, a mapping, a session). */
static void sh_share(struct fz_handle *h)
{
	h->shared = true;
	free(h->sh);
	h->sh = NULL;
}

/*
 * Compares @len bytes at offset @off of @h's shadow with @got (what a
 * READ or a mapping gave); false, and a failure naming @how, if they
 * differ.
 */
static bool sh_check(struct fz_thread *t, const struct fz_handle *h, uint64_t off,
		     const uint8_t *got, uint64_t len, const char *how)
{
	for (uint64_t i = 0; i < len; i++) {
		if (got[i] == h->sh[off + i])
			continue;
		FZ_FAIL(t, "id %u (heap %u flags %#x, %llu bytes): byte %llu %s %#x, shadow %#x",
			h->id, h->heap, h->flags, (unsigned long long)h->size,
			(unsigned long long)(off + i), how, got[i], h->sh[off + i]);
		sh_history(h);
		return false;
	}
	return true;
}

/* READ of @len bytes at @off of @h (at most a page of t->tmp) against its shadow. */
static void sh_read_check(struct fz_thread *t, const struct fz_handle *h, uint64_t off,
			  uint64_t len, const char *how)
{
	int ret;

	if (!h->sh || !len)
		return;
	if (len > env.page)
		len = env.page;
	ret = am_read(t->own, h->id, off, t->tmp, len);
	if (fz_expect(t, "READ of a shadowed buffer", ret, RES_OK))
		sh_check(t, h, off, t->tmp, len, how);
	t->sh_checks++;
}

/*
 * @len bytes of a mapping of @h at @p (buffer offset @off) against the
 * shadow, a word at a time (uncached mappings are Device memory on arm64).
 */
static void sh_map_check(struct fz_thread *t, const struct fz_handle *h, const void *p,
			 uint64_t off, uint64_t len, const char *how)
{
	for (uint64_t i = 0; h->sh && i + 8 <= len; i += 8) {
		uint64_t w = word_load((const uint8_t *)p + i), k = 0;

		if (!sh_check(t, h, off + i, (const uint8_t *)&w, 8, how)) {
			/* Whether READ agrees with the mapping or with the shadow. */
			int ret = am_read(t->own, h->id, off + i, &k, 8);

			tap_diag("  READ of those 8 bytes: %s, %#llx; the mapping %#llx",
				 ret ? ename(-ret) : "ok", (unsigned long long)k,
				 (unsigned long long)w);
			return;
		}
	}
	t->sh_checks++;
}

static void own_remove(struct fz_thread *t, struct fz_handle *h)
{
	t->stale[t->nstale < FZ_STALE_MAX ? t->nstale++ : below(t, FZ_STALE_MAX)] = h->id;
	free(h->sh);
	*h = t->h[--t->nh];
}

/* Room for one more id in the private client. */
static bool own_room(struct fz_thread *t)
{
	return t->nh < FZ_OWN_MAX - 1;
}

/*
 * What a call failed by injection did to private handle @h, asked of the
 * kernel with injection off: whether it has memory, and its heap, flags
 * and tag.
 */
static void own_probe(struct fz_thread *t, struct fz_handle *h)
{
	struct accmap_info a = { .id = h->id };

	if (ioctl(t->own, ACCMAP_IOC_INFO, &a)) {
		FZ_FAIL(t, "INFO of private id %u after an injected failure: %s", h->id,
			strerror(errno));
		return;
	}
	h->alloc = a.state & ACCMAP_STATE_ALLOCATED;
	h->known = true;
	h->heap = a.heap;
	h->flags = a.flags;
	h->tag = a.tag;
}

/* ---- records of the shared clients ---- */

/*
 * Remembers a new id of a shared client.  When every record is taken, an
 * old one is forgotten and its id freed (if no one did already).
 */
static void rec_add(struct fz_thread *t, struct fz_cl *cl, uint32_t id, uint64_t size,
		    bool alloc, bool readonly)
{
	uint32_t victim = 0;
	int slot = -1;

	pthread_mutex_lock(&cl->c->lock);
	for (unsigned int i = 0; i < FZ_REC_MAX; i++) {
		if (!cl->c->rec[i].used) {
			slot = (int)i;
			break;
		}
	}
	if (slot < 0) {
		slot = (int)below(t, FZ_REC_MAX);
		victim = cl->c->rec[slot].id;
	}
	cl->c->rec[slot] = (struct fz_rec){ .used = true, .id = id, .size = size,
					     .alloc = alloc, .readonly = readonly };
	pthread_mutex_unlock(&cl->c->lock);
	if (victim) {
		int ret = am_free(cl->fd, victim);

		fz_expect(t, "FREE of a forgotten id", ret, RES_OK | RES_E(ENOENT));
	}
}

static void rec_set_alloc(struct fz_cl *cl, const struct fz_idk *k)
{
	if (k->rec < 0)
		return;
	pthread_mutex_lock(&cl->c->lock);
	if (cl->c->rec[k->rec].used && cl->c->rec[k->rec].id == k->id)
		cl->c->rec[k->rec].alloc = true;
	pthread_mutex_unlock(&cl->c->lock);
}

static void rec_forget(struct fz_cl *cl, uint32_t id)
{
	pthread_mutex_lock(&cl->c->lock);
	for (unsigned int i = 0; i < FZ_REC_MAX; i++) {
		if (cl->c->rec[i].used && cl->c->rec[i].id == id)
			cl->c->rec[i].used = false;
	}
	pthread_mutex_unlock(&cl->c->lock);
}

/* ---- ioctls in a mutated envelope ---- */

/* The first ioctl number past the device's last (CHECKPOINT). */
#define FZ_NR_END	(_IOC_NR(ACCMAP_IOC_CHECKPOINT) + 1)

/* First published argument sizes (Documentation/userspace-api/accmap.rst). */
static unsigned int min_size(unsigned long cmd)
{
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_INFO))
		return ACCMAP_INFO_SIZE_VER1;
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_CREATE))
		return ACCMAP_CREATE_SIZE_VER1;
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_REPLAY_SETUP))
		return ACCMAP_REPLAY_SETUP_SIZE_VER1;
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_SVM))
		return ACCMAP_SVM_OP_SIZE_VER1;
	if (_IOC_NR(cmd) == _IOC_NR(ACCMAP_IOC_QUERY_HEAP))
		return ACCMAP_HEAP_INFO_SIZE_VER1;
	return _IOC_SIZE(cmd);
}

static void arg_ro_fill(struct fz_thread *t, size_t off, const void *src, size_t len)
{
	uint8_t *ro = t->arg + 2 * env.page;

	mprotect(ro, env.page, PROT_READ | PROT_WRITE);
	memcpy(ro + off, src, len);
	mprotect(ro, env.page, PROT_READ);
}

/* ---- fault injection ---- */

/*
 * With injection on for a seed, the kernel's failslab, fail_page_alloc
 * and fail_usercopy fail allocations and user copies of the fuzzer's
 * threads (task-filter), and only while they are inside an accmap ioctl:
 * make-it-fail is set around the call alone, so that page faults, mmap(),
 * fork() and the rest do not fail under the fuzzer.  A call may then also
 * end in ENOMEM or EFAULT; an EFAULT may come after the call did its work
 * (the result's copy back failed), so the fuzzer treats it as a result it
 * could not read (nowb).  "times" counts down from FZ_INJECT_TIMES as the
 * kernel injects: the difference is the count of injected failures.
 */
#define FZ_INJECT_TIMES		1000000000L

static const char *const fz_fail_dirs[] = { "failslab", "fail_page_alloc", "fail_usercopy" };

static struct {
	bool on;
	unsigned int probability;	/* percent */
	unsigned int interval;
} fz_inj;

static bool inject_knob(const char *dir, const char *knob, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/%s", dir, knob);
	return write_text(path, val);
}

static long inject_times(const char *dir)
{
	char path[128], buf[32] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/debug/%s/times", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

/* Sets the kernel's knobs for one seed; false (and a failed test) if it cannot. */
static bool inject_begin(uint64_t seed)
{
	char prob[16], ival[16], times[24];

	fz_inj.on = cfg.inject == FZ_INJECT_ALL || (cfg.inject == FZ_INJECT_HALF && (seed & 1));
	if (!fz_inj.on)
		return true;
	fz_inj.probability = 1 + (unsigned int)(seed % 10);
	fz_inj.interval = 1 + (unsigned int)((seed >> 4) % 4);
	snprintf(prob, sizeof(prob), "%u", fz_inj.probability);
	snprintf(ival, sizeof(ival), "%u", fz_inj.interval);
	snprintf(times, sizeof(times), "%ld", FZ_INJECT_TIMES);
	for (unsigned int i = 0; i < TAP_ARRAY_SIZE(fz_fail_dirs); i++) {
		const char *d = fz_fail_dirs[i];

		if (!CHECK(inject_knob(d, "task-filter", "Y") && inject_knob(d, "verbose", "0") &&
			   inject_knob(d, "space", "0") && inject_knob(d, "interval", ival) &&
			   inject_knob(d, "times", times) && inject_knob(d, "probability", prob),
			   "fault injection: cannot set /sys/kernel/debug/%s: %s", d,
			   strerror(errno)))
			return false;
	}
	/* Both default to leaving sleeping allocations alone: the driver's are. */
	if (!CHECK(inject_knob("failslab", "ignore-gfp-wait", "N") &&
		   inject_knob("fail_page_alloc", "ignore-gfp-wait", "N") &&
		   inject_knob("fail_page_alloc", "ignore-gfp-highmem", "N") &&
		   inject_knob("fail_page_alloc", "min-order", "0"),
		   "fault injection: cannot set the gfp filters: %s", strerror(errno)))
		return false;
	tap_diag("  injecting: %u%% of allocations and user copies in accmap ioctls, interval %u",
		 fz_inj.probability, fz_inj.interval);
	return true;
}

/* Turns injection off again and counts what it injected. */
static void inject_end(void)
{
	long n, total = 0;

	if (!fz_inj.on)
		return;
	for (unsigned int i = 0; i < TAP_ARRAY_SIZE(fz_fail_dirs); i++) {
		inject_knob(fz_fail_dirs[i], "probability", "0");
		n = inject_times(fz_fail_dirs[i]);
		if (n >= 0) {
			tap_diag("  %s: %ld injected", fz_fail_dirs[i], FZ_INJECT_TIMES - n);
			total += FZ_INJECT_TIMES - n;
		}
	}
	__atomic_add_fetch(&fz_sh->injected, (uint64_t)total, __ATOMIC_SEQ_CST);
	fz_inj.on = false;
}

static void inject_thread(struct fz_thread *t)
{
	t->mif = fz_inj.on ? open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC) : -1;
	if (fz_inj.on && t->mif < 0)
		FZ_FAIL(t, "make-it-fail: %s", strerror(errno));
}

/* ioctl() with injection on for this thread while it runs. */
static int inject_ioctl(struct fz_thread *t, int fd, unsigned long cmd, void *arg)
{
	int ret;

	if (t->mif < 0)
		return ioctl(fd, cmd, arg) ? -errno : 0;
	if (pwrite(t->mif, "1", 1, 0) != 1)
		FZ_FAIL(t, "make-it-fail on: %s", strerror(errno));
	ret = ioctl(fd, cmd, arg) ? -errno : 0;
	/* The write itself may have its user copy failed: until it takes. */
	for (unsigned int i = 0; pwrite(t->mif, "0", 1, 0) != 1; i++) {
		if (i > 1000) {
			FZ_FAIL(t, "make-it-fail stays on: %s", strerror(errno));
			break;
		}
	}
	return ret;
}

/*
 * ENOMEM without injection.  The kernel's own small allocations (a handle,
 * an id slot, a label, a dma-buf file, a vma, a fork's copy, a replay
 * session of a few small mappings, the copy of a short list) do not fail
 * here: the fuzzer runs in the root memory cgroup, and up to
 * PAGE_ALLOC_COSTLY_ORDER a GFP_KERNEL allocation is retried, or the OOM
 * killer runs, rather than fail.  Under injection inject_allowed() adds
 * ENOMEM to every accmap ioctl that allocates (make-it-fail is on around
 * those alone).  Only these calls may give it without injection:
 *   - ALLOC, CREATE with ACCMAP_CREATE_ALLOC, RESTORE_BUFFER making a buffer
 *     with memory: a buffer's pages (__GFP_RETRY_MAYFAIL), a full or
 *     fragmented carveout or CMA range, RLIMIT_MEMLOCK;
 *   - FROM_VA, UDMABUF_CREATE: long-term pins, which fail when a page
 *     cannot be migrated out of CMA (and FROM_VA's RLIMIT_MEMLOCK);
 *     RESTORE_FINISH too when it has FROM_VA buffers to pin again, or
 *     queued replay sessions to build (their tables, as REPLAY_SETUP's);
 *   - CACHE, CACHE_LIST, vgem's import of an accmap dma-buf: a DMA mapping
 *     of the buffer, for maintenance or for the importer, which fails where
 *     the device cannot reach the memory (cache.c, dmabuf.c);
 *   - REPLAY_SETUP, REPLAY_RUN of op_rsetup()/op_rrun(): lists of up to
 *     4096 maps or 2^20 ops copied through kvmalloc(), page tables and
 *     vmap()s as large as the mappings;
 *   - mmap() of a vgem dma-buf: vgem allocates the buffer's shmem pages
 *     there, with __GFP_RETRY_MAYFAIL.
 * The foreign buffers of op_foreign() are a few pages: dma-heap's order-0
 * pages and vgem's export allocate only what cannot fail.
 */

/*
 * What an injected failure adds to a call's allowed results: EFAULT (a
 * failed user copy, possibly after the call did its work), and ENOMEM
 * for the calls that allocate.  Looking an id up, freeing one, reading a
 * heap's, the pool's or a target's figures and ending a session allocate
 * nothing: ENOMEM from them would be a failure of something else.
 */
static __uint128_t inject_allowed(struct fz_thread *t, unsigned long cmd, __uint128_t allowed)
{
	if (t->mif < 0)
		return allowed;
	allowed |= RES_E(EFAULT);
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(ACCMAP_IOC_INFO):
	case _IOC_NR(ACCMAP_IOC_FREE):
	case _IOC_NR(ACCMAP_IOC_QUERY_HEAP):
	case _IOC_NR(ACCMAP_IOC_QUERY_POOL):
	case _IOC_NR(ACCMAP_IOC_REPLAY_QUERY):
	case _IOC_NR(ACCMAP_IOC_REPLAY_DESTROY):
		return allowed;
	case _IOC_NR(ACCMAP_IOC_CHECKPOINT):
		return t->ck_noalloc ? allowed : allowed | RES_E(ENOMEM);
	default:
		return allowed | RES_E(ENOMEM);
	}
}

/*
 * Under injection, a result the call would not give otherwise (t->inj)
 * says nothing of whether it ran: an injected EFAULT may fail the copy of
 * the argument in (it did not run) or of the result out (it did, but a new
 * id, session or fd is dropped again).  So may any EFAULT, even one the
 * call could give without injection.  The caller finds out what happened
 * where the model needs it (own_probe()).  An injected ENOMEM writes the
 * result back as any failure does (t->inj_wb): partial results are checked.
 */
static void inject_result(struct fz_thread *t, __uint128_t allowed, int ret, bool *intact)
{
	if (t->mif < 0 || !ret)
		return;
	if (ret == -EFAULT) {
		/* Counted as injected, though the call could give it anyway. */
		t->inj = true;
		t->nowb = false;
		*intact = false;
	} else if (!(allowed & RES_E(-ret))) {
		t->inj = true;
		t->inj_wb = *intact;
		*intact = false;
	}
	t->inj_calls[t->cur] += t->inj;
}

/*
 * Issues @cmd on @fd with @arg, the kernel's _IOC_SIZE(@cmd) bytes; one
 * call in ten goes through a mutated envelope: a wrong command (ENOTTY),
 * a size below the first version (EINVAL), a larger struct with a zero
 * tail (as if intact) or a non-zero one (E2BIG), a NULL, PROT_NONE or
 * page-straddling pointer (EFAULT), a read-only one (the handler runs,
 * writing the result back fails), or a misaligned one.  The result must
 * be in @allowed, or be what the envelope forces.  @arg gets what the
 * kernel wrote; *intact says whether the kernel took the call as given.
 */
static int fz_ioctl(struct fz_thread *t, int fd, unsigned long cmd, void *arg,
		    __uint128_t allowed, const char *what, bool *intact)
{
	size_t ksize = _IOC_SIZE(cmd), usize = ksize;
	unsigned int dir = _IOC_DIR(cmd), nr = _IOC_NR(cmd), type = _IOC_TYPE(cmd);
	uint8_t *p = arg, *rw = t->arg, *ro = t->arg + 2 * env.page;
	size_t off = 0, big;
	int ret;

	*intact = true;
	t->nowb = false;
	t->inj = false;
	t->inj_wb = false;
	if (!one_in(t, 10)) {
		ret = inject_ioctl(t, fd, cmd, arg);
		fz_expect(t, what, ret, inject_allowed(t, cmd, allowed));
		inject_result(t, allowed, ret, intact);
		return ret;
	}

	switch (below(t, 10)) {
	case 0:		/* another direction */
		dir = (dir + 1 + (unsigned int)below(t, 3)) & 3;
		allowed = RES_E(ENOTTY);
		break;
	case 1:		/* a number past the last ioctl, or another type */
		if (one_in(t, 2))
			nr = (unsigned int)range(t, FZ_NR_END, 0xff);
		else
			type = one_in(t, 2) ? 0xd9 : 0xdb;
		allowed = RES_E(ENOTTY);
		break;
	case 2:		/* smaller than the first version */
		usize = below(t, min_size(cmd));
		allowed = RES_E(EINVAL);
		break;
	case 3:		/* larger, zero tail: like an intact call */
	case 4:		/* larger, non-zero tail */
		/* _IOC_SIZE() has 14 bits: a 16 KiB page is one byte too many. */
		big = env.page > _IOC_SIZEMASK ? _IOC_SIZEMASK : env.page;
		usize = ksize + range(t, 1, one_in(t, 8) ? big - ksize : 64);
		memset(rw, 0, usize);
		memcpy(rw, arg, ksize);
		p = rw;
		if (usize > ksize && one_in(t, 2)) {
			rw[range(t, ksize, usize - 1)] = (uint8_t)range(t, 1, 255);
			allowed = RES_E(E2BIG);
		}
		break;
	case 5:
		p = NULL;
		allowed = RES_E(EFAULT);
		break;
	case 6:		/* PROT_NONE */
		p = t->arg + env.page;
		allowed = RES_E(EFAULT);
		break;
	case 7:		/* straddles the end of the read-write page */
		off = env.page - range(t, 1, ksize - 1);
		memcpy(rw + off, arg, env.page - off);
		p = rw + off;
		allowed = RES_E(EFAULT);
		break;
	case 8:		/* read-only: nothing can be written back */
		off = below(t, env.page - ksize + 1) & ~(size_t)7;
		arg_ro_fill(t, off, arg, ksize);
		p = ro + off;
		if (dir & _IOC_READ) {
			allowed = (allowed & ~RES_OK) | RES_E(EFAULT);
			*intact = false;
			t->nowb = true;
		}
		break;
	default:	/* misaligned */
		off = range(t, 1, 7);
		memcpy(rw + off, arg, ksize);
		p = rw + off;
		break;
	}
	if (allowed == RES_E(ENOTTY) || allowed == RES_E(EINVAL) || allowed == RES_E(E2BIG) ||
	    allowed == RES_E(EFAULT))
		*intact = false;

	ret = inject_ioctl(t, fd, _IOC(dir, type, nr, usize), p);
	fz_expect(t, what, ret, inject_allowed(t, cmd, allowed));
	inject_result(t, allowed, ret, intact);
	if ((*intact || t->inj_wb) && p != arg)
		memcpy(arg, p, ksize);
	return ret;
}

/* ---- INFO ---- */

static void info_check(struct fz_thread *t, const struct fz_idk *k, const struct accmap_info *a,
		       bool v1, struct fz_cl *cl)
{
	const uint32_t states = ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED |
				ACCMAP_STATE_READONLY | ACCMAP_STATE_CONTIGUOUS;
	bool alloc = a->state & ACCMAP_STATE_ALLOCATED;
	const struct fz_handle *h = k->h;

	if (a->id != k->id || a->pad || a->pad2 || (a->state & ~states) || !a->size ||
	    a->size % env.page || (k->size && a->size != k->size))
		FZ_FAIL(t, "INFO id %u: id %u pad %u pad2 %u state %#x size %llu (expected %llu)",
			k->id, a->id, a->pad, a->pad2, a->state, (unsigned long long)a->size,
			(unsigned long long)k->size);
	if (!alloc && (a->heap != ACCMAP_HEAP_NONE || a->flags || a->tag))
		FZ_FAIL(t, "INFO id %u without memory: heap %#x flags %#x tag %u", k->id,
			a->heap, a->flags, a->tag);
	if (alloc && (a->heap >= ACCMAP_HEAP_MAX || !(env.heaps & (1U << a->heap)) ||
		      (a->flags & ~ACCMAP_ALLOC_VALID_FLAGS)))
		FZ_FAIL(t, "INFO id %u: heap %u flags %#x", k->id, a->heap, a->flags);
	if (k->readonly != MAYBE && !!(a->state & ACCMAP_STATE_READONLY) != k->readonly)
		FZ_FAIL(t, "INFO id %u: state %#x, read-only expected %d", k->id, a->state,
			k->readonly);
	if (k->alloc == YES && !alloc)
		FZ_FAIL(t, "INFO id %u lost its memory: state %#x", k->id, a->state);
	/* One block: only memory has it, and a contiguous ALLOC must give it. */
	if ((!alloc && (a->state & ACCMAP_STATE_CONTIGUOUS)) ||
	    (alloc && (a->flags & ACCMAP_ALLOC_CONTIGUOUS) &&
	     !(a->state & ACCMAP_STATE_CONTIGUOUS)))
		FZ_FAIL(t, "INFO id %u: state %#x flags %#x: contiguous or not", k->id, a->state,
			a->flags);
	if (h && (alloc != h->alloc ||
		  (h->alloc && h->known && (a->heap != h->heap || a->flags != h->flags ||
					    a->tag != h->tag))))
		FZ_FAIL(t, "INFO id %u: state %#x heap %u flags %#x tag %u, model: %d %u %#x %u",
			k->id, a->state, a->heap, a->flags, a->tag, h->alloc, h->heap, h->flags,
			h->tag);
	if (v1) {
		const uint8_t *tail = (const uint8_t *)a + ACCMAP_INFO_SIZE_VER1;

		for (size_t i = 0; i < sizeof(*a) - ACCMAP_INFO_SIZE_VER1; i++) {
			if (tail[i] != GARBAGE_BYTE) {
				FZ_FAIL(t, "INFO of version 1 wrote byte %zu",
					ACCMAP_INFO_SIZE_VER1 + i);
				break;
			}
		}
		return;
	}
	/*
	 * Our id holds a reference; in a shared client another thread may
	 * free it while the call runs, and the count is read after the lookup.
	 * Exports are one per mode while the handle keeps ids; a dma-buf held
	 * elsewhere across a time without ids lives on beside the one a later
	 * GET_FD of its mode makes, so only a count no fd table can hold is
	 * wrong.
	 */
	if (a->exports > FZ_EXPORTS_MAX || !a->exports != !(a->state & ACCMAP_STATE_EXPORTED) ||
	    (h && !a->handle_refs))
		FZ_FAIL(t, "INFO id %u: exports %u state %#x handle_refs %u", k->id, a->exports,
			a->state, a->handle_refs);
	/* Never exported, never passed on: nothing but our id holds it. */
	if (h && !h->shared && (a->exports || a->maps || a->attachments || a->vmaps ||
				a->handle_refs != 1))
		FZ_FAIL(t, "INFO private id %u: refs %u exports %u maps %u attachments %u vmaps %u",
			k->id, a->handle_refs, a->exports, a->maps, a->attachments, a->vmaps);
	if (a->pad3)
		FZ_FAIL(t, "INFO id %u: pad3 %u", k->id, a->pad3);
	(void)cl;
}

static bool op_info(struct fz_thread *t)
{
	bool v1 = one_in(t, 8), intact = true;
	struct accmap_info a;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, false);
	memset(&a, GARBAGE_BYTE, sizeof(a));
	a.id = k.id;
	a.pad = one_in(t, 16) ? boundary32(t) | 1 : 0;
	exp_init(&x);
	fault_if(&x, EINVAL, a.pad != 0);
	fault_id(&x, &k, false);
	if (v1) {
		/* A caller built against version 1: 32 bytes, nothing written past them. */
		ret = ioctl(cl.fd, _IOC(_IOC_READ | _IOC_WRITE, ACCMAP_IOCTL_MAGIC,
					_IOC_NR(ACCMAP_IOC_INFO), ACCMAP_INFO_SIZE_VER1), &a) ?
			-errno : 0;
		fz_expect(t, "INFO (version 1)", ret, exp_allowed(&x));
	} else {
		ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_INFO, &a, exp_allowed(&x), "INFO", &intact);
	}
	if (!ret && intact)
		info_check(t, &k, &a, v1, &cl);
	cl_put(&cl);
	return true;
}

/* ---- commands that are not accmap's ---- */

static const unsigned long fz_cmds[] = {
	ACCMAP_IOC_CREATE, ACCMAP_IOC_ALLOC, ACCMAP_IOC_FREE, ACCMAP_IOC_GET_FD,
	ACCMAP_IOC_INFO, ACCMAP_IOC_FROM_FD, ACCMAP_IOC_WRITE, ACCMAP_IOC_READ,
	ACCMAP_IOC_SET_TAG_LABEL, ACCMAP_IOC_QUERY_HEAP, ACCMAP_IOC_QUERY_POOL,
	ACCMAP_IOC_CACHE, ACCMAP_IOC_CACHE_LIST, ACCMAP_IOC_FROM_VA, ACCMAP_IOC_REPLAY_QUERY,
	ACCMAP_IOC_REPLAY_SETUP, ACCMAP_IOC_REPLAY_RUN, ACCMAP_IOC_REPLAY_DESTROY,
	ACCMAP_IOC_SVM, ACCMAP_IOC_MAP_OFFSET, ACCMAP_IOC_CHECKPOINT,
};

static bool op_badcmd(struct fz_thread *t)
{
	unsigned long cmd = fz_cmds[below(t, TAP_ARRAY_SIZE(fz_cmds))];
	unsigned int dir = _IOC_DIR(cmd), size = _IOC_SIZE(cmd);
	__uint128_t want = RES_E(ENOTTY);
	uint64_t buf[64];
	struct fz_fd buf_fd;
	struct fz_cl cl;
	int fd, slot = -1, ret;

	for (size_t i = 0; i < TAP_ARRAY_SIZE(buf); i++)
		buf[i] = rnd(t);
	if (!cl_get(t, &cl))
		return false;
	fd = cl.fd;
	switch (below(t, 6)) {
	case 0:		/* past the last number */
		cmd = _IOC(below(t, 4), ACCMAP_IOCTL_MAGIC, range(t, FZ_NR_END, 0xff),
			   below(t, sizeof(buf)));
		break;
	case 1:		/* another direction */
		cmd = _IOC((dir + 1 + below(t, 3)) & 3, ACCMAP_IOCTL_MAGIC, _IOC_NR(cmd), size);
		break;
	case 2:		/* shorter than the first version */
		cmd = _IOC(dir, ACCMAP_IOCTL_MAGIC, _IOC_NR(cmd), below(t, min_size(cmd)));
		want = RES_E(EINVAL);
		break;
	case 3:		/* longer, with a byte the kernel does not know set */
		memset(buf, 0, sizeof(buf));
		{
			unsigned int usize = (unsigned int)range(t, size + 1, sizeof(buf));

			((uint8_t *)buf)[range(t, size, usize - 1)] = 0x5a;
			cmd = _IOC(dir, ACCMAP_IOCTL_MAGIC, _IOC_NR(cmd), usize);
		}
		want = RES_E(E2BIG);
		break;
	case 4:		/* a dma-buf's ioctl on the device */
		cmd = DMA_BUF_IOCTL_SYNC;
		buf[0] = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
		break;
	default:	/* an accmap ioctl on a dma-buf */
		slot = fd_claim(t, FD_BUF, true, &buf_fd);
		if (slot < 0) {
			cl_put(&cl);
			return false;
		}
		fd = buf_fd.fd;
		memset(buf, 0, sizeof(buf));
		break;
	}
	ret = ioctl(fd, cmd, buf) ? -errno : 0;
	if (!fz_expect(t, "a command that is not the device's", ret, want))
		FZ_FAIL(t, "the command was %#lx", cmd);
	if (slot >= 0)
		fd_release(slot);
	cl_put(&cl);
	return true;
}

/* ---- QUERY_HEAP, QUERY_POOL, SET_TAG_LABEL ---- */

static bool name_ok(const char *name, size_t len)
{
	size_t n = strnlen(name, len);

	if (n == 0 || n == len)
		return false;
	for (size_t i = n; i < len; i++) {
		if (name[i])
			return false;
	}
	return true;
}

static bool op_qheap(struct fz_thread *t)
{
	struct accmap_heap_info a;
	struct fz_exp x;
	struct fz_cl cl;
	uint32_t heap;
	bool intact;
	int ret;

	switch (below(t, 8)) {
	case 0:
		heap = ACCMAP_HEAP_SYSTEM;
		break;
	case 1:
		heap = ACCMAP_HEAP_USER;
		break;
	case 2:
		heap = (uint32_t)range(t, 1, 16);
		break;
	case 3:
		heap = (uint32_t)range(t, 17, 30);
		break;
	case 4:
		heap = (uint32_t)range(t, 32, 40);
		break;
	case 5:
		heap = boundary32(t);
		break;
	default:
		heap = (uint32_t)below(t, 32);
		break;
	}
	if (!cl_get(t, &cl))
		return false;
	memset(&a, GARBAGE_BYTE, sizeof(a));
	a.heap = heap;
	a.pad = one_in(t, 16) ? 1 + (uint32_t)below(t, UINT32_MAX) : 0;
	exp_init(&x);
	fault_if(&x, EINVAL, a.pad || heap >= ACCMAP_HEAP_MAX);
	fault_if(&x, ENODEV, heap < ACCMAP_HEAP_MAX && !(env.heaps & (1U << heap)));
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_QUERY_HEAP, &a, exp_allowed(&x), "QUERY_HEAP",
		       &intact);
	if (!ret && intact) {
		bool bad = a.heap != heap || a.pad || !name_ok(a.name, sizeof(a.name)) ||
			   a.free > a.total || a.largest_free > a.free;

		if (heap == ACCMAP_HEAP_SYSTEM)
			bad |= strcmp(a.name, "system") || a.largest_free != a.free || !a.total;
		else if (heap == ACCMAP_HEAP_USER)
			bad |= strcmp(a.name, "user") || a.total || a.free || a.largest_free;
		else
			bad |= a.used > a.total;
		if (bad)
			FZ_FAIL(t, "QUERY_HEAP %u: %u %u \"%.16s\" %llu used %llu free %llu/%llu",
				heap, a.heap, a.pad, a.name, (unsigned long long)a.total,
				(unsigned long long)a.used, (unsigned long long)a.free,
				(unsigned long long)a.largest_free);
	}
	cl_put(&cl);
	return true;
}

static bool op_qpool(struct fz_thread *t)
{
	struct accmap_pool_info a;
	struct fz_exp x;
	struct fz_cl cl;
	uint64_t pooled = 0;
	bool intact, bad;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	memset(&a, GARBAGE_BYTE, sizeof(a));
	a.pad = one_in(t, 16) ? 1 + (uint32_t)below(t, UINT32_MAX) : 0;
	exp_init(&x);
	fault_if(&x, EINVAL, a.pad != 0);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_QUERY_POOL, &a, exp_allowed(&x), "QUERY_POOL",
		       &intact);
	if (!ret && intact) {
		bad = a.pad || !a.norders || a.norders > ACCMAP_POOL_MAX_ORDERS ||
		      a.pooled > a.cap;
		for (uint32_t i = 0; !bad && i < ACCMAP_POOL_MAX_ORDERS; i++) {
			const struct accmap_pool_order *o = &a.orders[i];

			if (i >= a.norders) {
				bad = o->order || o->pad || o->block_size || o->zeroed || o->dirty;
				continue;
			}
			bad = o->pad || o->block_size != (uint64_t)env.page << o->order ||
			      (i == 0 ? o->order != 0 : o->order <= a.orders[i - 1].order);
			pooled += o->block_size * (o->zeroed + o->dirty);
		}
		if (bad || pooled != a.pooled)
			FZ_FAIL(t, "QUERY_POOL: norders %u cap %llu pooled %llu (the orders: %llu)",
				a.norders, (unsigned long long)a.cap,
				(unsigned long long)a.pooled, (unsigned long long)pooled);
	}
	cl_put(&cl);
	return true;
}

static bool op_label(struct fz_thread *t)
{
	struct accmap_tag_label a;
	struct fz_exp x;
	struct fz_cl cl;
	size_t len = below(t, 4) ? below(t, ACCMAP_LABEL_LEN) : 0;
	bool intact;

	memset(&a, 0, sizeof(a));
	a.tag = FZ_TAG_BASE + (uint16_t)below(t, FZ_TAGS);
	for (size_t i = 0; i < len; i++)
		a.label[i] = (char)range(t, 0x20, 0x7e);
	exp_init(&x);
	switch (below(t, 12)) {
	case 0:		/* not printable */
		if (len) {
			static const char bad[] = {
				'\t', '\n', 0x1f, 0x7f, (char)0x80, (char)0xff,
			};

			a.label[below(t, len)] = bad[below(t, sizeof(bad))];
			fault(&x, EINVAL, YES);
		}
		break;
	case 1:		/* no NUL */
		for (size_t i = 0; i < ACCMAP_LABEL_LEN; i++)
			a.label[i] = (char)range(t, 0x20, 0x7e);
		fault(&x, EINVAL, YES);
		break;
	case 2:		/* a byte after the NUL */
		if (len < ACCMAP_LABEL_LEN - 1) {
			a.label[range(t, len + 1, ACCMAP_LABEL_LEN - 1)] = 'x';
			fault(&x, EINVAL, YES);
		}
		break;
	case 3:
		a.pad = (uint16_t)range(t, 1, 0xffff);
		fault(&x, EINVAL, YES);
		break;
	case 4:
		a.flags = (uint32_t)range(t, 1, UINT32_MAX);
		fault(&x, EINVAL, YES);
		break;
	default:
		break;
	}
	if (!cl_get(t, &cl))
		return false;
	fz_ioctl(t, cl.fd, ACCMAP_IOC_SET_TAG_LABEL, &a, exp_allowed(&x), "SET_TAG_LABEL",
		 &intact);
	cl_put(&cl);
	return true;
}

/* ---- CREATE, ALLOC, FREE ---- */

/* A buffer size: mostly a few pages, sometimes not a whole number of them. */
static uint64_t small_size(struct fz_thread *t)
{
	switch (below(t, 8)) {
	case 0:
		return range(t, 1, env.page);
	case 1:
		return range(t, 1, FZ_SMALL_PAGES) * env.page - range(t, 0, 1);
	case 2:
		return range(t, 1, FZ_SMALL_PAGES * env.page);
	default:
		return range(t, 1, 4) * env.page;
	}
}

static uint64_t page_round(uint64_t size)
{
	return (size + env.page - 1) / env.page * env.page;
}

static uint32_t pick_heap_mask(struct fz_thread *t);

/*
 * ENXIO an allocation with ACCMAP_ALLOC_DMA32 may give: when not every
 * heap of @usable has memory below 4 GiB (those without are passed over;
 * with none left, or the rest skipped by the heap rule, ENXIO).
 */
static __uint128_t dma32_may(uint32_t flags, uint32_t usable)
{
	if (!(flags & ACCMAP_ALLOC_DMA32) || (usable & env.dma32_heaps) == usable)
		return 0;
	return RES_E(ENXIO);
}

/*
 * The allocation fields of CREATE with ACCMAP_CREATE_ALLOC, as ALLOC's
 * would be (no contiguous buffers: op_alloc covers those), and what they
 * may make it return.
 */
static void create_alloc_fields(struct fz_thread *t, struct accmap_create *a, bool priv,
				struct fz_exp *x)
{
	uint64_t size = page_round(a->size);
	uint32_t usable;

	a->flags = ACCMAP_CREATE_ALLOC;
	a->heap_mask = pick_heap_mask(t);
	a->heap = GARBAGE_U32;
	a->tag = FZ_TAG_BASE + (uint16_t)below(t, FZ_TAGS);
	switch (below(t, 6)) {
	case 0:
		a->alloc_flags = ACCMAP_ALLOC_WRITECOMBINE;
		break;
	case 1:
		a->alloc_flags = ACCMAP_ALLOC_UNCACHED;
		break;
	case 2:
		a->alloc_flags = one_in(t, 2) ? 3 : boundary32(t) & ~ACCMAP_ALLOC_CONTIGUOUS;
		break;
	default:
		a->alloc_flags = 0;
		break;
	}
	a->align = one_in(t, 8) ? (one_in(t, 2) ? 3 * (uint32_t)env.page : 1U << 31) : 0;
	if (one_in(t, 24))
		a->pad = (uint16_t)range(t, 1, 0xffff);
	/* As op_alloc: the system heap only for what fits the test budget. */
	if (size > FZ_BIG_MAX || (!priv && size > FZ_SMALL_PAGES * env.page))
		a->heap_mask &= ~ACCMAP_HEAP_MASK_SYSTEM;
	usable = a->heap_mask & env.alloc_heaps;
	fault_if(x, EINVAL, (a->alloc_flags & ~ACCMAP_ALLOC_VALID_FLAGS) ||
		 (a->alloc_flags & ACCMAP_ALLOC_WRITECOMBINE &&
		  a->alloc_flags & ACCMAP_ALLOC_UNCACHED) ||
		 a->pad || (a->align && ((a->align & (a->align - 1)) ||
					 a->align > ACCMAP_ALLOC_MAX_ALIGN)) || !a->heap_mask);
	fault_if(x, ENODEV, a->heap_mask && !usable);
	/* Carveouts that give no cached buffers: the heap rule. */
	if (!(a->alloc_flags & (ACCMAP_ALLOC_WRITECOMBINE | ACCMAP_ALLOC_UNCACHED)) &&
	    !(usable & ACCMAP_HEAP_MASK_SYSTEM))
		x->may |= RES_E(EINVAL);
	x->may |= dma32_may(a->alloc_flags, usable);
}

static bool op_create(struct fz_thread *t)
{
	struct accmap_create a;
	struct fz_exp x;
	struct fz_cl cl;
	bool intact, with_alloc;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	if (cl.priv && !own_room(t)) {
		cl_put(&cl);
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.id = GARBAGE_U32;
	a.size = one_in(t, 12) ? boundary(t) : small_size(t);
	/* Big buffers only in the private client, where ALLOC knows their size. */
	if (!cl.priv && a.size > FZ_SMALL_PAGES * env.page && a.size <= env.ram)
		a.size = env.page;
	exp_init(&x);
	fault_if(&x, EINVAL, !a.size || a.size > env.ram || page_round(a.size) > env.ram ||
		 a.size > UINT64_MAX - env.page + 1);
	with_alloc = one_in(t, 4);
	if (with_alloc) {
		create_alloc_fields(t, &a, cl.priv, &x);
	} else if (one_in(t, 24)) {
		a.flags = (uint32_t)range(t, 1, UINT32_MAX);
		/* Unknown bits, or ALLOC with an empty heap mask. */
		fault_if(&x, EINVAL, true);
	}
	if (with_alloc)
		x.may |= RES_E(ENOMEM);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_CREATE, &a, exp_allowed(&x), "CREATE", &intact);
	if (!ret && intact) {
		struct fz_handle *h = NULL;

		if (!a.id)
			FZ_FAIL(t, "CREATE gave id 0");
		else if (with_alloc && (a.heap >= ACCMAP_HEAP_MAX ||
					!(a.heap_mask & env.alloc_heaps & (1U << a.heap))))
			FZ_FAIL(t, "CREATE_ALLOC mask %#x: heap %u", a.heap_mask, a.heap);
		else if (with_alloc && a.offset < (1ULL << 30))
			FZ_FAIL(t, "CREATE_ALLOC: offset %#llx", (unsigned long long)a.offset);
		else if (cl.priv)
			h = own_add(t, a.id, page_round(a.size));
		else
			rec_add(t, &cl, a.id, page_round(a.size), with_alloc, false);
		if (h && with_alloc) {
			h->alloc = true;
			h->heap = a.heap;
			h->flags = a.alloc_flags;
			h->tag = a.tag;
		}
	}
	cl_put(&cl);
	return true;
}

static uint32_t pick_heap_mask(struct fz_thread *t)
{
	switch (below(t, 12)) {
	case 0:
		return 0;
	case 1:
		return UINT32_MAX;
	case 2:
		return 1U << ACCMAP_HEAP_USER;
	case 3: return env.alloc_heaps & ~ACCMAP_HEAP_MASK_SYSTEM;	/* carveouts */
	case 4:
		return (uint32_t)rnd(t) & env.alloc_heaps;
	case 5:
		return (uint32_t)rnd(t);
	case 6: return 0xfffe0000U;	/* ids no heap has */
	default:
		return ACCMAP_HEAP_MASK_SYSTEM;
	}
}

static bool op_alloc(struct fz_thread *t)
{
	struct accmap_alloc a;
	uint32_t usable;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	bool intact;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, false);
	memset(&a, 0, sizeof(a));
	a.id = k.id;
	a.heap_mask = pick_heap_mask(t);
	a.heap = GARBAGE_U32;
	a.tag = FZ_TAG_BASE + (uint16_t)below(t, FZ_TAGS);
	switch (below(t, 8)) {
	case 0:
		a.flags = ACCMAP_ALLOC_WRITECOMBINE;
		break;
	case 1:
		a.flags = ACCMAP_ALLOC_UNCACHED;
		break;
	case 2:
		a.flags = one_in(t, 2) ? 3 : boundary32(t);
		break;
	case 3:
		/* One block: from CMA, or the page allocator's large orders. */
		a.flags = ACCMAP_ALLOC_CONTIGUOUS | (one_in(t, 2) ? ACCMAP_ALLOC_WRITECOMBINE : 0);
		break;
	case 4:
		/* Below 4 GiB: fresh from the low zones, or one block of them. */
		a.flags = ACCMAP_ALLOC_DMA32 | (one_in(t, 4) ? ACCMAP_ALLOC_CONTIGUOUS : 0) |
			  (one_in(t, 2) ? ACCMAP_ALLOC_UNCACHED : 0);
		break;
	default:
		a.flags = 0;
		break;
	}
	switch (below(t, 10)) {
	case 0:
		a.align = (uint32_t)env.page;
		break;
	case 1:
		a.align = 1U << range(t, 0, 30);
		break;
	case 2:
		a.align = one_in(t, 2) ? 1U << 31 : boundary32(t);
		break;
	default:
		a.align = 0;
		break;
	}
	if (one_in(t, 24))
		a.pad = (uint16_t)range(t, 1, 0xffff);
	/* Never ask the system heap for a buffer that does not fit this machine's test budget. */
	if (!k.size || k.size > FZ_BIG_MAX)
		a.heap_mask &= ~ACCMAP_HEAP_MASK_SYSTEM;
	usable = a.heap_mask & env.alloc_heaps;

	exp_init(&x);
	fault_if(&x, EINVAL, (a.flags & ~ACCMAP_ALLOC_VALID_FLAGS) ||
		 (a.flags & ACCMAP_ALLOC_WRITECOMBINE && a.flags & ACCMAP_ALLOC_UNCACHED) ||
		 a.pad || (a.align && ((a.align & (a.align - 1)) ||
				       a.align > ACCMAP_ALLOC_MAX_ALIGN)) || !a.heap_mask);
	/* One block is at most ACCMAP_CONTIG_MAX_SIZE (1 GiB); an unknown size may be more. */
	if (a.flags & ACCMAP_ALLOC_CONTIGUOUS) {
		fault_if(&x, EINVAL, k.size > FZ_CONTIG_MAX);
		if (!k.size)
			x.may |= RES_E(EINVAL);
	}
	fault_if(&x, ENODEV, a.heap_mask && !usable);
	fault_id(&x, &k, false);
	fault(&x, EEXIST, tri_and(k.exists, k.alloc));
	/* Carveouts that give no cached buffers: the heap rule. */
	if (!(a.flags & (ACCMAP_ALLOC_WRITECOMBINE | ACCMAP_ALLOC_UNCACHED)) &&
	    !(usable & ACCMAP_HEAP_MASK_SYSTEM))
		x.may |= RES_E(EINVAL);
	x.may |= RES_E(ENOMEM) | dma32_may(a.flags, usable);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_ALLOC, &a, exp_allowed(&x), "ALLOC", &intact);
	if (!ret && intact && (a.heap >= ACCMAP_HEAP_MAX || !(usable & (1U << a.heap))))
		FZ_FAIL(t, "ALLOC id %u mask %#x: heap %u", k.id, a.heap_mask, a.heap);
	if ((!ret && intact) || (ret == -EFAULT && t->nowb)) {
		/* A result that could not be written back leaves the memory allocated. */
		if (k.h) {
			k.h->alloc = true;
			k.h->known = !ret;
			k.h->heap = a.heap;
			k.h->flags = a.flags;
			k.h->tag = a.tag;
		}
		rec_set_alloc(&cl, &k);
	} else if (t->inj && k.h) {
		own_probe(t, k.h);
	}
	cl_put(&cl);
	return true;
}

static bool op_free(struct fz_thread *t)
{
	struct accmap_free a;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	bool intact;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, false);
	a.id = k.id;
	a.pad = one_in(t, 24) ? (uint32_t)range(t, 1, UINT32_MAX) : 0;
	exp_init(&x);
	fault_if(&x, EINVAL, a.pad != 0);
	fault_id(&x, &k, false);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_FREE, &a, exp_allowed(&x), "FREE", &intact);
	if (!ret && intact) {
		if (k.h)
			own_remove(t, k.h);
		else if (!cl.priv)
			rec_forget(&cl, k.id);
	}
	cl_put(&cl);
	return true;
}

/* ---- WRITE and READ ---- */

/* Regions of user memory a copy may name, all of them safe to hand the kernel. */
#define U_RW_PAGES	FZ_UBUF_PAGES

/*
 * Walks the user side of a copy: *fault is set if the kernel must fail to
 * copy some element (it names the read-only page when the kernel writes
 * user memory, or the PROT_NONE page, the NULL page or kernel space);
 * returns false if some element lies anywhere else (the call would reach
 * memory this thread does not own).
 */
static bool user_walk(struct fz_thread *t, uint64_t addr, uint64_t elem, uint64_t stride,
		      uint64_t count, bool kernel_writes, bool *fault)
{
	uint64_t ub = (uintptr_t)t->ubuf, page = env.page;
	uint64_t ro = ub + U_RW_PAGES * page, none = ro + page, end = none + page;

	*fault = false;
	if (count > 65536)
		return addr >= FZ_KERN_ADDR && (*fault = true);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t a = addr + i * stride, b = a + elem;

		if (a >= FZ_KERN_ADDR) {
			*fault = true;
		} else if (b <= page) {
			*fault = true;
		} else if (a >= ub && b <= end) {
			if (b > none || (kernel_writes && b > ro))
				*fault = true;
		} else {
			return false;
		}
	}
	return true;
}

/* addr + (count - 1) * stride + elem, false if it does not fit in 64 bits. */
static bool span_end(uint64_t addr, uint64_t count, uint64_t stride, uint64_t elem, uint64_t *end)
{
	uint64_t v;

	if (__builtin_mul_overflow(count - 1, stride, &v) || __builtin_add_overflow(v, elem, &v) ||
	    __builtin_add_overflow(v, addr, &v))
		return false;
	*end = v;
	return true;
}

static void rw_handle_side(struct fz_thread *t, struct accmap_rw *a, uint64_t size)
{
	uint64_t span;

	a->elem_size = range(t, 1, size < 4096 ? size : (one_in(t, 4) ? size : 256));
	a->count = one_in(t, 2) ? 1 : range(t, 2, 16);
	a->handle_stride = a->elem_size + (one_in(t, 2) ? 0 : below(t, 64));
	a->user_stride = a->count > 1 ? a->elem_size + below(t, 32) : (one_in(t, 2) ? 0 : rnd(t));
	if (!span_end(0, a->count, a->handle_stride, a->elem_size, &span) || span > size) {
		a->count = 1;
		span = a->elem_size;
	}
	a->offset = below(t, size - span + 1);
}

static void rw_mutate(struct fz_thread *t, struct accmap_rw *a, uint64_t size)
{
	switch (below(t, 12)) {
	case 0:
		a->elem_size = 0;
		break;
	case 1:
		a->count = 0;
		break;
	case 2:
		a->flags = (uint32_t)range(t, 1, UINT32_MAX);
		break;
	case 3:
		a->count = range(t, 2, 8);
		a->handle_stride = below(t, a->elem_size);
		break;
	case 4:
		a->count = range(t, 2, 8);
		a->user_stride = below(t, a->elem_size);
		break;
	case 5:
		a->offset = size - (a->elem_size > 1 ? below(t, a->elem_size - 1) : 0);
		break;
	case 6:
		a->offset = boundary(t);
		break;
	case 7:
		a->count = boundary(t);
		break;
	case 8:
		a->elem_size = boundary(t);
		break;
	case 9:
		a->handle_stride = boundary(t);
		a->count = range(t, 2, 4);
		break;
	case 10:
		a->user_stride = boundary(t);
		a->count = range(t, 2, 4);
		break;
	default:
		a->offset = size;
		break;
	}
}

/* The user address of a copy of @span bytes, in one of the regions user_walk() knows. */
static uint64_t rw_user_addr(struct fz_thread *t, uint64_t span)
{
	uint64_t ub = (uintptr_t)t->ubuf, rw = U_RW_PAGES * env.page;

	switch (below(t, 16)) {
	case 11:	/* into the read-only page, maybe on into PROT_NONE */
		if (span <= rw)
			return ub + rw - below(t, span < env.page ? span : env.page);
		break;
	case 12:	/* ends in the PROT_NONE page */
		if (span <= rw)
			return ub + rw + env.page + env.page - span - below(t, env.page / 2);
		break;
	case 13:
		if (span < env.page)
			return below(t, env.page - span);
		break;
	case 14:
		return FZ_KERN_ADDR + below(t, 1ULL << 30);
	case 15:
		return UINT64_MAX - below(t, span + 1);
	default:
		break;
	}
	if (span <= rw)
		return ub + below(t, rw - span + 1);
	return FZ_KERN_ADDR;
}

/*
 * What a READ or WRITE of private buffer @h did, against its shadow.
 * WRITE is all or nothing but for EFAULT (and EINTR), where the elements
 * before the failing one may have been copied: an ENOMEM (injected: the
 * kernel mapping is made before the first copy) or a fault of the
 * arguments copies nothing, and the shadow stays.  A call that ran but
 * whose result could not be written back (EFAULT, read-only argument)
 * did its copy whole unless a fault of the arguments stopped it; any
 * other EFAULT ends the shadow.
 */
static void rw_shadow(struct fz_thread *t, struct fz_handle *h, const struct accmap_rw *a,
		      bool write, int ret, bool intact, bool faulty)
{
	bool whole = (!ret && intact) || (ret == -EFAULT && t->nowb && !faulty && !t->inj);

	sh_note(t, h, write ? (whole ? SHE_WRITE : SHE_WRITE_FAILED) : SHE_READ, ret, a->offset,
		a->count * a->handle_stride);
	if (!write) {
		for (uint64_t i = 0; whole && !t->nowb && i < a->count; i++) {
			uint64_t ua = a->addr + i * a->user_stride;
			const uint8_t *p = (const uint8_t *)(uintptr_t)ua;

			if (!sh_check(t, h, a->offset + i * a->handle_stride, p, a->elem_size,
				      "READ gives"))
				break;
		}
		t->sh_checks += whole && !t->nowb;
		return;
	}
	if (whole) {
		for (uint64_t i = 0; i < a->count; i++) {
			uint64_t ua = a->addr + i * a->user_stride;

			memcpy(h->sh + a->offset + i * a->handle_stride,
			       (const void *)(uintptr_t)ua, a->elem_size);
		}
	} else if (ret == -EFAULT) {
		/*
		 * Perhaps some elements: a user fault or an injected one on
		 * the way, also in a call fz_ioctl() calls not intact because
		 * EFAULT was all it allowed (a misaligned argument, say).
		 */
		sh_drop(h);
	}
}

static bool op_rw(struct fz_thread *t)
{
	bool write = one_in(t, 2), ufault, intact;
	uint64_t size, uend = 0, hend = 0;
	struct accmap_rw a;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	bool uok, hok;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, true);
	size = k.size && k.size <= FZ_SMALL_PAGES * env.page ? k.size : 4 * env.page;
	memset(&a, 0, sizeof(a));
	a.id = k.id;
	a.bytes = GARBAGE_U64;
	rw_handle_side(t, &a, size);
	if (one_in(t, 4))
		rw_mutate(t, &a, size);
	uok = span_end(0, a.count, a.user_stride, a.elem_size, &uend);
	a.addr = rw_user_addr(t, uok ? uend : UINT64_MAX);
	/* Elements anywhere else would be this process's own memory: keep them off it. */
	uok = span_end(a.addr, a.count, a.user_stride, a.elem_size, &uend);
	if (uok && a.elem_size && a.count &&
	    !user_walk(t, a.addr, a.elem_size, a.user_stride, a.count, !write, &ufault)) {
		a.addr = FZ_KERN_ADDR;
		uok = span_end(a.addr, a.count, a.user_stride, a.elem_size, &uend);
	}
	hok = span_end(a.offset, a.count, a.handle_stride, a.elem_size, &hend);

	exp_init(&x);
	fault_if(&x, EINVAL, a.flags || !a.elem_size || !a.count ||
		 (a.count > 1 && (a.user_stride < a.elem_size || a.handle_stride < a.elem_size)) ||
		 !uok || !hok);
	if (!x.definite) {
		user_walk(t, a.addr, a.elem_size, a.user_stride, a.count, !write, &ufault);
		fault(&x, ERANGE, tri_beyond(&k, hend));
		fault_if(&x, EFAULT, ufault);
	}
	fault_id(&x, &k, true);
	if (write)
		fault(&x, EACCES, tri_and(k.exists, k.readonly));
	if (k.h && write)
		sh_get(k.h);
	if (k.h && write)
		k.h->dirty = true;
	ret = fz_ioctl(t, cl.fd, write ? ACCMAP_IOC_WRITE : ACCMAP_IOC_READ, &a, exp_allowed(&x),
		       write ? "WRITE" : "READ", &intact);
	if (k.h && k.h->sh)
		rw_shadow(t, k.h, &a, write, ret, intact, x.definite);
	if (!ret && intact && a.bytes != a.elem_size * a.count)
		FZ_FAIL(t, "%s: bytes %llu, expected %llu", write ? "WRITE" : "READ",
			(unsigned long long)a.bytes,
			(unsigned long long)(a.elem_size * a.count));
	/* A buffer nobody wrote reads as zero, whatever its pages held before. */
	if (!ret && intact && !write && k.h && !k.h->dirty && !k.h->shared && a.count <= 64) {
		for (uint64_t i = 0; i < a.count; i++) {
			const uint8_t *p = (const uint8_t *)(uintptr_t)(a.addr + i * a.user_stride);
			size_t nz = find_nonzero(p, a.elem_size);

			if (nz < a.elem_size) {
				FZ_FAIL(t, "READ of fresh id %u: byte %llu is %#x, not 0", k.id,
					(unsigned long long)(a.offset + i * a.handle_stride + nz),
					p[nz]);
				break;
			}
		}
	}
	cl_put(&cl);
	return true;
}

/* Data written into a private buffer reads back; fresh ones read as zero; FROM_VA shares pages. */
static bool op_verify(struct fz_thread *t)
{
	struct fz_handle *h = NULL;
	uint64_t off, len;
	unsigned int seed = (unsigned int)rnd(t);
	uint8_t *mem;
	size_t bad;
	int ret;

	for (int i = 0; i < 4 && t->nh; i++) {
		h = &t->h[below(t, t->nh)];
		if (h->alloc && !h->shared && h->size <= FZ_SMALL_PAGES * env.page)
			break;
		h = NULL;
	}
	if (!h)
		return false;
	len = range(t, 1, h->size < 8192 ? h->size : 8192);
	off = below(t, h->size - len + 1);
	if (h->fromva) {
		mem = t->scr + h->va_page * env.page + off;
		ret = am_read(t->own, h->id, off, t->tmp, len);
		if (fz_expect(t, "READ of a FROM_VA buffer", ret, RES_OK) &&
		    memcmp(t->tmp, mem, len))
			FZ_FAIL(t, "FROM_VA id %u: READ at %llu differs from the user memory",
				h->id, (unsigned long long)off);
		/* Only the writable parts of the scratch area take user writes. */
		if (h->va_page + (off + len - 1) / env.page < FZ_SCR_RW ||
		    h->va_page >= FZ_SCR_RW + FZ_SCR_RO + FZ_SCR_NONE) {
			fill_pattern(mem, len, off, seed);
			ret = am_read(t->own, h->id, off, t->tmp, len);
			if (fz_expect(t, "READ of a FROM_VA buffer", ret, RES_OK) &&
			    memcmp(t->tmp, mem, len))
				FZ_FAIL(t, "FROM_VA id %u does not see what the process wrote",
					h->id);
		}
		if (!h->readonly) {
			fill_pattern(t->tmp, len, off, seed + 1);
			ret = am_write(t->own, h->id, off, t->tmp, len);
			if (fz_expect(t, "WRITE of a FROM_VA buffer", ret, RES_OK) &&
			    memcmp(t->tmp, mem, len))
				FZ_FAIL(t, "the process does not see WRITE to FROM_VA id %u",
					h->id);
		}
		return true;
	}
	if (sh_get(h)) {
		ret = am_read(t->own, h->id, off, t->tmp, len);
		if (fz_expect(t, "READ of a shadowed buffer", ret, RES_OK))
			sh_check(t, h, off, t->tmp, len, "READ gives");
		t->sh_checks++;
	} else if (!h->dirty) {
		ret = am_read(t->own, h->id, off, t->tmp, len);
		bad = ret ? len : find_nonzero(t->tmp, len);
		if (fz_expect(t, "READ of a fresh buffer", ret, RES_OK) && bad < len)
			FZ_FAIL(t, "fresh id %u (heap %u): byte %llu is %#x, not 0", h->id, h->heap,
				(unsigned long long)(off + bad), t->tmp[bad]);
	}
	if (h->readonly)
		return true;
	h->dirty = true;
	fill_pattern(t->ubuf, len, off, seed);
	ret = am_write(t->own, h->id, off, t->ubuf, len);
	if (!fz_expect(t, "WRITE", ret, RES_OK)) {
		sh_drop(h);
		return true;
	}
	if (h->sh) {
		memcpy(h->sh + off, t->ubuf, len);
		sh_note(t, h, SHE_WRITE, 0, off, len);
	}
	memset(t->tmp, 0, len);
	ret = am_read(t->own, h->id, off, t->tmp, len);
	bad = ret ? len : find_pattern_mismatch(t->tmp, len, off, seed);
	if (fz_expect(t, "READ", ret, RES_OK) && bad < len)
		FZ_FAIL(t, "id %u: byte %llu reads %#x, not what was written", h->id,
			(unsigned long long)(off + bad), t->tmp[bad]);
	return true;
}

/* ---- CACHE and CACHE_LIST ---- */

/* One cache op on @k; adds its faults to @x. */
static void cache_op_make(struct fz_thread *t, struct accmap_cache_op *op, const struct fz_idk *k,
			  struct fz_exp *x)
{
	uint64_t size = k->size ? k->size : 4 * env.page, end;
	bool arg_bad;

	op->id = k->id;
	op->op = (uint32_t)range(t, ACCMAP_CACHE_WRITEBACK, ACCMAP_CACHE_WRITEBACK_INVALIDATE);
	op->length = one_in(t, 4) ? size : range(t, 1, size);
	op->offset = below(t, size - op->length + 1);
	switch (below(t, 24)) {
	case 0:
		op->op = one_in(t, 2) ? 0 : boundary32(t) | 4;
		break;
	case 1:
		op->length = 0;
		break;
	case 2:
		op->offset = boundary(t);
		break;
	case 3:
		op->length = boundary(t);
		break;
	case 4:
		op->offset = size - below(t, op->length);
		break;
	default:
		break;
	}
	arg_bad = op->op < ACCMAP_CACHE_WRITEBACK || op->op > ACCMAP_CACHE_WRITEBACK_INVALIDATE ||
		  !op->length || __builtin_add_overflow(op->offset, op->length, &end);
	fault_if(x, EINVAL, arg_bad);
	if (!arg_bad)
		fault(x, ERANGE, tri_beyond(k, end));
	fault_id(x, k, true);
	/* An invalidate could discard the owner's writes: not through a read-only id. */
	if (!arg_bad && (op->op & ACCMAP_CACHE_INVALIDATE))
		fault(x, EACCES, tri_and(k->exists, k->readonly));
	x->may |= RES_E(ENOMEM);
}

/*
 * A cache operation changes no byte of the buffer as the CPU sees it,
 * but an invalidate: that drops lines the CPU wrote and did not write
 * back, where caches are not coherent with memory (arm64) and the
 * buffer is cached (or its flags are unknown): there the shadow goes,
 * whatever the call returned (it may have run).  Otherwise the range is
 * read and compared with the shadow, whatever the operation's result.
 */
static void cache_shadow(struct fz_thread *t, struct fz_handle *h,
			 const struct accmap_cache_op *a)
{
	uint64_t off = a->offset < h->size ? a->offset : 0;
	uint64_t len = a->length < h->size - off ? a->length : h->size - off;

	sh_note(t, h, SHE_CACHE, (int)a->op, a->offset, a->length);

#ifndef __x86_64__
	if (a->op == ACCMAP_CACHE_INVALIDATE &&
	    (!h->known || !(h->flags & (ACCMAP_ALLOC_WRITECOMBINE | ACCMAP_ALLOC_UNCACHED)))) {
		sh_drop(h);
		return;
	}
#endif
	sh_read_check(t, h, off, len, "after a cache operation reads");
}

static bool op_cache(struct fz_thread *t)
{
	struct accmap_cache_op a;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	bool intact;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, true);
	exp_init(&x);
	cache_op_make(t, &a, &k, &x);
	fz_ioctl(t, cl.fd, ACCMAP_IOC_CACHE, &a, exp_allowed(&x), "CACHE", &intact);
	if (k.h && sh_get(k.h))
		cache_shadow(t, k.h, &a);
	cl_put(&cl);
	return true;
}

static bool op_clist(struct fz_thread *t)
{
	struct accmap_cache_op *ops = (struct accmap_cache_op *)t->ubuf;
	uint32_t n = one_in(t, 32) ? ACCMAP_CACHE_LIST_MAX : (uint32_t)range(t, 1, 8);
	int first_definite = -1, first_maybe = -1;
	struct accmap_cache_list a;
	__uint128_t allowed;
	struct fz_exp all, x;
	struct fz_cl cl;
	bool intact;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	exp_init(&all);
	for (uint32_t i = 0; i < n; i++) {
		struct fz_idk k;

		pick_id(t, &cl, &k, true);
		exp_init(&x);
		cache_op_make(t, &ops[i], &k, &x);
		/* Mostly lists without faults, so that they run. */
		if (x.may & ~RES_E(ENOMEM) && !one_in(t, 3) && n < 64) {
			struct fz_idk k2 = k;

			exp_init(&x);
			ops[i].op = ACCMAP_CACHE_WRITEBACK;
			ops[i].offset = 0;
			ops[i].length = 1;
			fault_id(&x, &k2, true);
			x.may |= RES_E(ENOMEM);
		}
		if (first_definite < 0 && x.definite)
			first_definite = (int)i;
		if (first_maybe < 0 && (x.may & ~RES_E(ENOMEM)))
			first_maybe = (int)i;
		all.may |= x.may;
		all.definite |= x.definite;
	}
	memset(&a, 0, sizeof(a));
	a.ops = (uintptr_t)ops;
	a.count = n;
	a.done = GARBAGE_U32;
	switch (below(t, 24)) {
	case 0:
		a.count = one_in(t, 2) ? 0 : ACCMAP_CACHE_LIST_MAX + 1 + (uint32_t)below(t, 4);
		fault(&all, EINVAL, YES);
		break;
	case 1:
		a.pad = 1;
		fault(&all, EINVAL, YES);
		break;
	case 2:
		a.pad2 = (uint32_t)range(t, 1, UINT32_MAX);
		fault(&all, EINVAL, YES);
		break;
	case 3:
		a.ops = 0;
		fault(&all, EFAULT, YES);
		break;
	case 4:		/* the list runs into the PROT_NONE page */
		a.ops = (uintptr_t)(t->ubuf + (U_RW_PAGES + 1) * env.page) -
			range(t, 1, n * sizeof(*ops) - 1);
		fault(&all, EFAULT, YES);
		break;
	default:
		break;
	}
	allowed = exp_allowed(&all);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_CACHE_LIST, &a, allowed, "CACHE_LIST", &intact);
	/* Errors of the list as a whole come before it is read: done stays as it was. */
	if (intact && ret == -EINVAL && (!a.count || a.count > ACCMAP_CACHE_LIST_MAX || a.pad ||
					 a.pad2) && a.done != GARBAGE_U32)
		FZ_FAIL(t, "CACHE_LIST with count %u pad %u pad2 %u wrote done %u", a.count, a.pad,
			a.pad2, a.done);
	if (intact && !ret && a.done != a.count)
		FZ_FAIL(t, "CACHE_LIST of %u: done %u", a.count, a.done);
	/*
	 * A failing entry is named by done: not before the first that may
	 * fail, not after the first that must.
	 */
	if (intact && ret && ret != -EFAULT && a.done != GARBAGE_U32 &&
	    (first_maybe < 0 || (int)a.done < first_maybe ||
	     (first_definite >= 0 && (int)a.done > first_definite) || a.done >= n))
		FZ_FAIL(t, "CACHE_LIST of %u: %s at done %u; faults maybe from %d, surely at %d",
			n, ename(-ret), a.done, first_maybe, first_definite);
	/* An injected failure may stop the list at any entry up to the first that must fail. */
	if (t->inj_wb && a.done != GARBAGE_U32 &&
	    ((first_definite >= 0 && (int)a.done > first_definite) || a.done >= n))
		FZ_FAIL(t, "CACHE_LIST of %u: injected %s at done %u; faults surely at %d", n,
			ename(-ret), a.done, first_definite);
	cl_put(&cl);
	return true;
}

/* ---- touching mappings ---- */

/* Set (atomically, with a signal fence) while a touch may fault. */
static __thread void *fz_jmp;	/* a sigjmp_buf */
static __thread struct fz_thread *fz_self;
static __thread int fz_sig_caught;

static void fz_on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	sigjmp_buf *jb = __atomic_load_n(&fz_jmp, __ATOMIC_RELAXED);

	if (jb) {
		__atomic_store_n(&fz_sig_caught, sig, __ATOMIC_RELAXED);
		siglongjmp(*jb, 1);
	}
	/* Not a touch of ours: say where, then die of it as usual. */
	{
		char msg[160];
		void *frames[32];
		int n = snprintf(msg, sizeof(msg),
				 "# fuzz: signal %d at %p, seed %llu thread %d op %llu (%s)\n",
				 sig, si ? si->si_addr : NULL, (unsigned long long)env.seed,
				 fz_self ? (int)fz_self->idx : -1,
				 fz_self ? (unsigned long long)fz_self->nop : 0,
				 fz_self ? fz_ops[fz_self->cur].name : "-");

		if (write(STDOUT_FILENO, msg, n) < 0)
			n = 0;
		n = backtrace(frames, 32);
		backtrace_symbols_fd(frames, n, STDOUT_FILENO);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Reads one aligned 64-bit word, after writing @v there if @write (aligned
 * accesses only: uncached buffers are Device memory on arm64).  Returns 0
 * or the signal the access took; *got is what was read.
 */
static int touch(uint64_t *p, bool write, uint64_t v, uint64_t *got)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 0)) {
		__atomic_store_n(&fz_jmp, NULL, __ATOMIC_RELAXED);
		return __atomic_load_n(&fz_sig_caught, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&fz_jmp, &jb, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (write)
		word_store(p, v);
	*got = word_load(p);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&fz_jmp, NULL, __ATOMIC_RELAXED);
	return 0;
}

/* The word of a page that thread @t writes through shared mappings. */
static uint64_t *my_word(struct fz_thread *t, void *page)
{
	return (uint64_t *)page + 2 + t->idx;
}

/* ---- GET_FD, FROM_FD, closing, DMA_BUF_IOCTL_SYNC ---- */

/* A new dma-buf of @h, mapped before anyone else has it: the contents @h's shadow holds. */
static void getfd_shadow(struct fz_thread *t, struct fz_handle *h, int fd)
{
	void *p = mmap(NULL, h->size, PROT_READ, MAP_SHARED, fd, 0);

	if (fz_expect(t, "mmap of a new export", p == MAP_FAILED ? -errno : 0, RES_OK) &&
	    p != MAP_FAILED) {
		sh_map_check(t, h, p, 0, h->size, "through its new dma-buf's mmap is");
		munmap(p, h->size);
	}
	free(h->sh);
	h->sh = NULL;
}

static bool op_getfd(struct fz_thread *t)
{
	struct fz_handle exp_h = { 0 };
	struct accmap_get_fd a;
	uint32_t mode;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	uint64_t size;
	bool intact;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, true);
	memset(&a, 0, sizeof(a));
	a.id = k.id;
	a.fd = (int32_t)GARBAGE_U32;
	switch (below(t, 10)) {
	case 0:
		a.fd_flags = O_RDONLY | O_CLOEXEC;
		break;
	case 1:
		a.fd_flags = O_RDONLY;
		break;
	case 2:
		a.fd_flags = O_RDWR;
		break;
	case 3:
		a.fd_flags = one_in(t, 2) ? O_WRONLY | O_CLOEXEC : 3;
		break;
	case 4:
		a.fd_flags = O_RDWR | (1U << range(t, 2, 31));
		break;
	default:
		a.fd_flags = O_RDWR | O_CLOEXEC;
		break;
	}
	if (one_in(t, 24))
		a.pad = (uint32_t)range(t, 1, UINT32_MAX);
	mode = a.fd_flags & O_ACCMODE;
	exp_init(&x);
	fault_if(&x, EINVAL, a.pad || (a.fd_flags & ~(O_CLOEXEC | O_ACCMODE)) ||
		 (mode != O_RDONLY && mode != O_RDWR));
	fault_id(&x, &k, true);
	if (mode == O_RDWR)
		fault(&x, EACCES, tri_and(k.exists, k.readonly));
	x.may |= RES_E(EMFILE) | RES_E(ENFILE);
	/* The contents as they were, for a read through the new dma-buf. */
	if (k.h && sh_get(k.h)) {
		exp_h = *k.h;
		exp_h.sh = k.h->sh;
		k.h->sh = NULL;
	}
	if (k.h)
		sh_share(k.h);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_GET_FD, &a, exp_allowed(&x), "GET_FD", &intact);
	if (ret || !intact) {
		free(exp_h.sh);
		cl_put(&cl);
		return true;
	}
	size = k.size;
	if (exp_h.sh)
		getfd_shadow(t, &exp_h, a.fd);
	if (a.fd <= STDERR_FILENO) {
		FZ_FAIL(t, "GET_FD returned fd %d", a.fd);
	} else if (one_in(t, 4) || !size) {
		int fdflags = fcntl(a.fd, F_GETFD), flflags = fcntl(a.fd, F_GETFL);
		off_t end = lseek(a.fd, 0, SEEK_END);

		if (!!(fdflags & FD_CLOEXEC) != !!(a.fd_flags & O_CLOEXEC) ||
		    (flflags & O_ACCMODE) != (int)mode || end <= 0 ||
		    (size && (uint64_t)end != size))
			FZ_FAIL(t, "GET_FD %u flags %#x: cloexec %d, mode %#x, size %lld of %llu",
				k.id, a.fd_flags, !!(fdflags & FD_CLOEXEC), flflags & O_ACCMODE,
				(long long)end, (unsigned long long)size);
		size = end > 0 ? (uint64_t)end : 0;
	}
	/*
	 * A writable export of a private FROM_VA buffer would let other
	 * threads write this thread's scratch pages: it is tested, not kept.
	 */
	if (!size || (k.h && k.h->fromva && mode == O_RDWR))
		close(a.fd);
	else
		fd_add(a.fd, FD_BUF, size, mode == O_RDONLY, 0, NULL);
	cl_put(&cl);
	return true;
}

static bool op_fromfd(struct fz_thread *t)
{
	struct fz_fd e = { .fd = -1 };
	struct accmap_from_fd a;
	struct fz_exp x;
	struct fz_cl cl;
	int slot = -1, ret;
	bool intact;

	if (!cl_get(t, &cl))
		return false;
	if (cl.priv && !own_room(t)) {
		cl_put(&cl);
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.id = GARBAGE_U32;
	exp_init(&x);
	switch (below(t, 12)) {
	case 0:
		slot = fd_claim(t, FD_DEV, false, &e);
		a.fd = slot >= 0 ? e.fd : cl.fd;
		fault(&x, EINVAL, YES);
		break;
	case 1:
		a.fd = env.null_fd;
		fault(&x, EINVAL, YES);
		break;
	case 2:
		a.fd = cl.fd;
		fault(&x, EINVAL, YES);
		break;
	case 3:
		a.fd = one_in(t, 2) ? -1 : (one_in(t, 2) ? INT_MAX : 1 << 20);
		fault(&x, EBADF, YES);
		break;
	default:
		slot = claim_buf_fd(t, &x, &e, &a.fd);
		break;
	}
	if (one_in(t, 24))
		a.flags = (uint32_t)range(t, 1, UINT32_MAX);
	if (one_in(t, 24))
		a.pad = (uint32_t)range(t, 1, UINT32_MAX);
	fault_if(&x, EINVAL, a.flags || a.pad);
	x.may |= RES_E(ENOSPC);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_FROM_FD, &a, exp_allowed(&x), "FROM_FD", &intact);
	if (!ret && intact) {
		if (cl.priv) {
			struct fz_handle *h = own_add(t, a.id, e.size);

			if (h) {
				h->alloc = true;
				h->known = false;
				h->readonly = e.rdonly;
				h->shared = true;
				h->dirty = true;
			}
		} else {
			rec_add(t, &cl, a.id, e.size, true, e.rdonly);
		}
	}
	if (slot >= 0)
		fd_release(slot);
	cl_put(&cl);
	return true;
}

static bool op_closefd(struct fz_thread *t)
{
	struct fz_fd e;
	int slot = fd_claim(t, FD_BUF, true, &e);

	if (slot < 0)
		return false;
	fd_retire(slot);
	fd_release(slot);
	return true;
}

static bool op_sync(struct fz_thread *t)
{
	static const uint64_t dirs[] = { DMA_BUF_SYNC_READ, DMA_BUF_SYNC_WRITE, DMA_BUF_SYNC_RW };
	struct dma_buf_sync s;
	struct fz_fd e;
	bool valid = true;
	int slot, ret;

	slot = fd_claim(t, FD_BUF, true, &e);
	if (slot < 0)
		return false;
	/*
	 * Linux 6.1's udmabuf builds its sg table in begin_cpu_access without
	 * a lock: two threads syncing one udmabuf at once leak a table
	 * (kmemleak reports it).  That is udmabuf's own bug, and accmap is
	 * only its importer here: leave udmabuf's CPU access alone.
	 */
	if (e.origin == 'u') {
		fd_release(slot);
		return false;
	}
	s.flags = (one_in(t, 2) ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) | dirs[below(t, 3)];
	if (one_in(t, 8)) {
		s.flags = one_in(t, 2) ? (s.flags & DMA_BUF_SYNC_END) :
					 s.flags | (1ULL << range(t, 3, 63));
		valid = false;
	}
	ret = ioctl(e.fd, DMA_BUF_IOCTL_SYNC, &s) ? -errno : 0;
	/*
	 * Linux 6.1's udmabuf maps the buffer for its misc device, which has
	 * no DMA mask, on begin_cpu_access: that fails with EINVAL.  Not ours.
	 */
	if (!fz_expect(t, "DMA_BUF_IOCTL_SYNC", ret,
		       valid ? RES_OK | (e.origin == 'u' ? RES_E(EINVAL) : 0) :
			       RES_E(EINVAL)))
		FZ_FAIL(t, "of a dma-buf of kind %d origin %c, flags %#llx", e.kind,
			e.origin ? e.origin : '-', (unsigned long long)s.flags);
	if (one_in(t, 4)) {
		off_t end = lseek(e.fd, 0, SEEK_END);

		if (end < 0 || (uint64_t)end != e.size)
			FZ_FAIL(t, "lseek(SEEK_END) of a dma-buf of %llu bytes: %lld (%s)",
				(unsigned long long)e.size, (long long)end, strerror(errno));
	}
	fd_release(slot);
	return true;
}

/* ---- mmap of dma-bufs ---- */

static void map_drop(struct fz_thread *t, unsigned int i)
{
	munmap(t->maps[i].addr, t->maps[i].len);
	t->maps[i] = t->maps[--t->nmaps];
}

/* Touches every page of a mapping (at most 16); no touch may fault. */
static void map_touch(struct fz_thread *t, const struct fz_map *m, size_t first, size_t n)
{
	for (size_t i = first; i < first + n && i < m->len / env.page; i++) {
		uint8_t *page = (uint8_t *)m->addr + i * env.page;
		uint64_t v = rnd(t), got;
		int sig = touch(my_word(t, page), m->writable, v, &got);

		if (sig)
			FZ_FAIL(t, "touching page %zu of a %s mapping of %zu bytes: signal %d", i,
				m->writable ? "writable" : "read-only", m->len, sig);
		else if (m->writable && !m->accmap && got != v)
			FZ_FAIL(t, "page %zu of a foreign mapping: wrote %#llx, read %#llx", i,
				(unsigned long long)v, (unsigned long long)got);
		if (sig)
			return;
	}
}

static bool op_mmap(struct fz_thread *t)
{
	size_t npages, off, len;
	int prot, flags = MAP_SHARED, slot, want = 0;
	struct fz_map m;
	struct fz_fd e;
	void *p;

	slot = fd_claim(t, FD_BUF, true, &e);
	if (slot < 0)
		return false;
	npages = e.size / env.page;
	off = below(t, npages);
	len = range(t, 1, npages - off < 16 ? npages - off : 16);
	off *= env.page;
	len *= env.page;
	prot = e.rdonly || one_in(t, 4) ? PROT_READ : PROT_READ | PROT_WRITE;
	if (e.kind == FD_BUF && one_in(t, 4)) {
		switch (below(t, 6)) {
		case 0:
			flags = MAP_PRIVATE;
			want = EINVAL;
			break;
		case 1:
			len = e.size - off + env.page * range(t, 1, 2);
			want = EINVAL;
			break;
		case 2:
			off += range(t, 1, env.page - 1);
			want = EINVAL;
			break;
		case 3:
			len = 0;
			want = EINVAL;
			break;
		case 4:
			off = e.size;
			want = EINVAL;
			break;
		default:
			if (e.rdonly) {
				prot |= PROT_WRITE;
				want = EACCES;
			}
			break;
		}
	}
	p = mmap(NULL, len, prot, flags, e.fd, (off_t)off);
	fz_expect(t, "mmap of a dma-buf", p == MAP_FAILED ? -errno : 0,
		  want ? RES_E(want) : RES_OK | (e.origin == 'v' ? RES_E(ENOMEM) : 0));
	fd_release(slot);
	if (p == MAP_FAILED)
		return true;
	if (want) {
		munmap(p, len);
		return true;
	}
	m = (struct fz_map){ .addr = p, .len = len, .writable = prot & PROT_WRITE,
			     .accmap = e.kind == FD_BUF };
	map_touch(t, &m, 0, 16);
	if (!m.writable && m.accmap && one_in(t, 4)) {
		uint64_t got;
		int sig = touch(my_word(t, p), true, 1, &got);

		if (sig != SIGSEGV)
			FZ_FAIL(t, "writing a read-only mapping: signal %d, expected SIGSEGV", sig);
		if (e.rdonly)
			fz_expect(t, "mprotect(PROT_WRITE) of a read-only dma-buf mapping",
				  mprotect(p, len, PROT_READ | PROT_WRITE) ? -errno : 0,
				  RES_E(EACCES));
	}
	if (t->nmaps == FZ_MAPS_MAX)
		map_drop(t, (unsigned int)below(t, t->nmaps));
	t->maps[t->nmaps++] = m;
	return true;
}

/*
 * MAP_OFFSET, then (in the private client, whose ids no other thread
 * frees) a mapping of /dev/accmap at that offset, kept like a dma-buf's.
 */
static bool op_mapoff(struct fz_thread *t)
{
	size_t npages, first, len;
	struct accmap_map_offset a;
	int prot, flags = MAP_SHARED, want = 0;
	struct fz_exp x;
	struct fz_idk k;
	struct fz_cl cl;
	struct fz_map m;
	bool intact;
	void *p;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_id(t, &cl, &k, true);
	memset(&a, 0, sizeof(a));
	a.id = k.id;
	a.offset = GARBAGE_U64;
	if (one_in(t, 24))
		a.flags = 1U << below(t, 32);
	exp_init(&x);
	fault_if(&x, EINVAL, a.flags);
	fault(&x, ENOENT, tri_not(k.exists));
	fault(&x, EINVAL, tri_and(k.exists, tri_not(k.alloc)));
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_MAP_OFFSET, &a, exp_allowed(&x), "MAP_OFFSET",
		       &intact);
	if (ret || !intact)
		goto out;
	if (a.offset % env.page || a.offset < (1ULL << 30) || a.offset > INT64_MAX) {
		FZ_FAIL(t, "MAP_OFFSET %u: offset %#llx", k.id, (unsigned long long)a.offset);
		goto out;
	}
	if (!cl.priv || !k.h || !k.size)
		goto out;

	npages = k.size / env.page;
	first = below(t, npages);
	len = range(t, 1, npages - first < 16 ? npages - first : 16) * env.page;
	/* A FROM_VA buffer is this thread's scratch memory: read it only. */
	prot = k.readonly == YES || k.h->fromva || one_in(t, 4) ?
	       PROT_READ : PROT_READ | PROT_WRITE;
	if (one_in(t, 4)) {
		switch (below(t, 3)) {
		case 0:
			flags = MAP_PRIVATE;
			break;
		case 1:
			len = (npages - first + range(t, 1, 2)) * env.page;
			break;
		default:
			first = npages;		/* the unused page after the buffer */
			len = env.page;
			break;
		}
		want = EINVAL;
	} else if (k.readonly == YES && one_in(t, 4)) {
		/*
		 * EACCES, unless the client holds a writable id for the same
		 * buffer too (FROM_FD of its own two exports): the model does
		 * not know which of its ids share a buffer.
		 */
		prot |= PROT_WRITE;
		want = EACCES;
	}
	p = mmap(NULL, len, prot, flags, cl.fd, (off_t)(a.offset + first * env.page));
	fz_expect(t, "mmap of /dev/accmap", p == MAP_FAILED ? -errno : 0,
		  want == EACCES ? RES_E(EACCES) | RES_OK :
		  want ? RES_E(want) : RES_OK);
	if (p == MAP_FAILED)
		goto out;
	if (want) {
		munmap(p, len);
		goto out;
	}
	/* What the id's mapping shows, before anything can write through it. */
	if (sh_get(k.h))
		sh_map_check(t, k.h, p, first * env.page, len, "through the id's mmap is");
	sh_share(k.h);
	m = (struct fz_map){ .addr = p, .len = len, .writable = prot & PROT_WRITE,
			     .accmap = true };
	map_touch(t, &m, 0, 16);
	if (t->nmaps == FZ_MAPS_MAX)
		map_drop(t, (unsigned int)below(t, t->nmaps));
	t->maps[t->nmaps++] = m;
out:
	cl_put(&cl);
	return true;
}

static bool op_touch(struct fz_thread *t)
{
	const struct fz_map *m;

	if (!t->nmaps)
		return false;
	m = &t->maps[below(t, t->nmaps)];
	map_touch(t, m, below(t, m->len / env.page), range(t, 1, 2));
	return true;
}

/* Unmaps a mapping, or a piece of it (which splits it in two). */
static bool op_munmap(struct fz_thread *t)
{
	unsigned int i;
	struct fz_map *m;
	size_t pages, first, n;

	if (!t->nmaps)
		return false;
	i = (unsigned int)below(t, t->nmaps);
	m = &t->maps[i];
	pages = m->len / env.page;
	if (pages < 3 || one_in(t, 2) || t->nmaps == FZ_MAPS_MAX) {
		map_drop(t, i);
		return true;
	}
	first = range(t, 1, pages - 2);
	n = range(t, 1, pages - 1 - first);
	fz_expect(t, "munmap of a piece of a mapping",
		  munmap((uint8_t *)m->addr + first * env.page, n * env.page) ? -errno : 0, RES_OK);
	t->maps[t->nmaps] = *m;
	t->maps[t->nmaps].addr = (uint8_t *)m->addr + (first + n) * env.page;
	t->maps[t->nmaps].len = (pages - first - n) * env.page;
	t->nmaps++;
	m->len = first * env.page;
	return true;
}

/* ---- FROM_VA ---- */

/* Kind of each scratch page: what FROM_VA may make of it. */
static int scr_kind(size_t page)
{
	if (page < FZ_SCR_RW)
		return PROT_READ | PROT_WRITE;
	if (page < FZ_SCR_RW + FZ_SCR_RO)
		return PROT_READ;
	if (page < FZ_SCR_RW + FZ_SCR_RO + FZ_SCR_NONE)
		return PROT_NONE;
	return PROT_READ | PROT_WRITE;
}

static bool op_fromva(struct fz_thread *t)
{
	uint64_t end, ram = env.ram, page = env.page;
	struct accmap_from_va a;
	size_t first = 0, n = 0;
	bool intact, scratch = false;
	struct fz_exp x;
	struct fz_cl cl;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	if (cl.priv && !own_room(t)) {
		cl_put(&cl);
		return false;
	}
	memset(&a, 0, sizeof(a));
	a.id = GARBAGE_U32;
	a.flags = one_in(t, 2) ? ACCMAP_FROM_VA_WRITE : 0;
	a.tag = FZ_TAG_BASE + (uint16_t)below(t, FZ_TAGS);
	exp_init(&x);
	switch (below(t, 16)) {
	case 0:		/* a mapping of a dma-buf: neither anonymous nor shmem */
		if (t->nmaps && t->maps[0].accmap) {
			a.addr = (uintptr_t)t->maps[0].addr;
			a.size = t->maps[0].len;
			a.flags = 0;
			fault(&x, EOPNOTSUPP, YES);
			break;
		}
		fallthrough;
	case 1:		/* the NULL page */
		a.addr = 0;
		a.size = page;
		fault(&x, EFAULT, YES);
		break;
	case 2:		/* kernel space */
		a.addr = FZ_KERN_ADDR + below(t, 1 << 20) * page;
		a.size = page * range(t, 1, 4);
		fault(&x, EINVAL, YES);
		break;
	case 3:		/* huge, from a PROT_NONE page on: nothing may be pinned */
		a.addr = (uintptr_t)(t->scr + (FZ_SCR_RW + FZ_SCR_RO) * page);
		switch (below(t, 4)) {
		case 0:
			a.size = ram / 2 / page * page;
			break;
		case 1:
			a.size = ram;
			break;
		case 2:
			a.size = ram + page;
			break;
		default:
			a.size = (1ULL << 40);
			break;
		}
		/*
		 * Beyond RAM, or beyond the end of user space: EINVAL; else
		 * EFAULT, or EOPNOTSUPP if the range reaches a mapping that is
		 * neither anonymous nor shmem (a dma-buf's, the vDSO).
		 */
		fault(&x, a.size > ram ? EINVAL : EFAULT, YES);
		if (a.size <= ram)
			x.may |= RES_E(EINVAL) | RES_E(EOPNOTSUPP);
		break;
	case 4:		/* not page aligned */
		a.addr = (uintptr_t)t->scr + (one_in(t, 2) ? range(t, 1, page - 1) : 0);
		a.size = page * range(t, 1, 2);
		if (a.addr == (uintptr_t)t->scr)
			a.size += range(t, 1, page - 1);
		fault(&x, EINVAL, YES);
		break;
	case 5:		/* wraps */
		a.addr = UINT64_MAX & ~(page - 1);
		a.size = page * range(t, 2, 4);
		fault(&x, EINVAL, YES);
		break;
	case 6:
		a.addr = (uintptr_t)t->scr;
		a.size = 0;
		fault(&x, EINVAL, YES);
		break;
	default:
		scratch = true;
		first = below(t, FZ_SCR_PAGES);
		n = one_in(t, 4) ? range(t, 1, FZ_SCR_PAGES - first) :
				   range(t, 1, FZ_SCR_PAGES - first < 4 ? FZ_SCR_PAGES - first : 4);
		a.addr = (uintptr_t)t->scr + first * page;
		a.size = n * page;
		for (size_t i = first; i < first + n; i++) {
			int kind = scr_kind(i);

			fault_if(&x, EFAULT, kind == PROT_NONE ||
				 (!(kind & PROT_WRITE) && (a.flags & ACCMAP_FROM_VA_WRITE)));
		}
		/* Other threads may write buffers of shared clients: those pin other pages. */
		if (!cl.priv) {
			a.addr = (uintptr_t)t->scr + FZ_SCR_PAGES * page + below(t, 4) * page;
			a.size = range(t, 1, 4) * page;
			exp_init(&x);
			scratch = false;
		}
		break;
	}
	if (one_in(t, 24))
		a.flags |= 1U << range(t, 1, 31);
	if (one_in(t, 24))
		a.pad = (uint16_t)range(t, 1, 0xffff);
	if (one_in(t, 24))
		a.pad2 = (uint32_t)range(t, 1, UINT32_MAX);
	fault_if(&x, EINVAL, (a.flags & ~ACCMAP_FROM_VA_VALID_FLAGS) || a.pad || a.pad2 ||
		 __builtin_add_overflow(a.addr, a.size, &end));
	x.may |= RES_E(ENOMEM) | RES_E(ENOSPC);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_FROM_VA, &a, exp_allowed(&x), "FROM_VA", &intact);
	if (!ret && intact) {
		if (cl.priv) {
			struct fz_handle *h = own_add(t, a.id, a.size);

			if (h) {
				h->alloc = true;
				h->heap = ACCMAP_HEAP_USER;
				h->tag = a.tag;
				h->readonly = !(a.flags & ACCMAP_FROM_VA_WRITE);
				h->dirty = true;
				h->fromva = scratch;
				h->va_page = first;
				/* Pinned pages that VERIFY does not know: treat as shared. */
				h->shared = !scratch;
			}
		} else {
			rec_add(t, &cl, a.id, a.size, true, !(a.flags & ACCMAP_FROM_VA_WRITE));
		}
	}
	cl_put(&cl);
	return true;
}

/* ---- replay: targets ---- */

static bool op_rquery(struct fz_thread *t)
{
	struct accmap_replay_target_info a;
	struct fz_exp x;
	struct fz_cl cl;
	uint32_t index;
	bool intact, bad;
	int ret;

	switch (below(t, 6)) {
	case 0:
		index = env.ntargets + (uint32_t)below(t, 3);
		break;
	case 1:
		index = boundary32(t);
		break;
	case 2:
		index = (uint32_t)below(t, env.ntargets);
		break;
	default:
		index = env.sim;
		break;
	}
	if (!cl_get(t, &cl))
		return false;
	memset(&a, GARBAGE_BYTE, sizeof(a));
	a.index = index;
	exp_init(&x);
	fault_if(&x, ENOENT, index >= env.ntargets);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_REPLAY_QUERY, &a, exp_allowed(&x), "REPLAY_QUERY",
		       &intact);
	if (!ret && intact) {
		bad = a.index != index || !name_ok(a.name, sizeof(a.name)) || !a.window_size ||
		      !a.formats || (a.formats & ~((1U << ACCMAP_PGT_COUNT) - 1)) || !a.as_count;
		if (index == env.sim)
			bad |= strcmp(a.name, SIM_NAME) || a.window_size != SIM_WINDOW ||
			       a.formats != 3 || a.as_count != SIM_AS_COUNT ||
			       a.gpu_id != SIM_GPU_ID ||
			       a.flags != (ACCMAP_REPLAY_TARGET_SIM | ACCMAP_REPLAY_TARGET_IRQ |
					   ACCMAP_REPLAY_TARGET_SVM);
		else
			/* A window: what AS_PRESENT says, 16 blocks at most. */
			bad |= (a.flags & ~(ACCMAP_REPLAY_TARGET_IRQ | ACCMAP_REPLAY_TARGET_SVM)) ||
			       a.as_count > MALI_AS_BLOCKS || strncmp(a.name, "mmio", 4);
		if (bad)
			FZ_FAIL(t, "REPLAY_QUERY %u: %u \"%.32s\" %#x window %#llx %#x %u %#x",
				index, a.index, a.name, a.flags, (unsigned long long)a.window_size,
				a.formats, a.as_count, a.gpu_id);
	}
	cl_put(&cl);
	return true;
}

/* ---- replay: sessions ---- */

static struct fz_sess *sess_find(struct fz_thread *t, uint32_t id)
{
	for (unsigned int i = 0; i < t->ns; i++) {
		if (t->s[i].id == id)
			return &t->s[i];
	}
	return NULL;
}

static int destroy_raw(int fd, uint32_t session)
{
	struct accmap_replay_destroy d = { .session = session, .pad = 0 };

	return ioctl(fd, ACCMAP_IOC_REPLAY_DESTROY, &d) ? -errno : 0;
}

static void sess_drop(struct fz_thread *t, unsigned int i)
{
	int ret = destroy_raw(t->own, t->s[i].id);

	fz_expect(t, "REPLAY_DESTROY of a live session", ret, RES_OK);
	t->stale_sess = t->s[i].id;
	t->s[i] = t->s[--t->ns];
}

static void srec_add(struct fz_thread *t, struct fz_cl *cl, const struct accmap_replay_setup *a)
{
	const struct accmap_replay_map *m = (const struct accmap_replay_map *)(uintptr_t)a->maps;
	uint32_t victim = 0;
	int slot = -1;

	pthread_mutex_lock(&cl->c->lock);
	for (unsigned int i = 0; i < FZ_SREC_MAX; i++) {
		if (!cl->c->srec[i].used) {
			slot = (int)i;
			break;
		}
	}
	if (slot < 0) {
		slot = (int)below(t, FZ_SREC_MAX);
		victim = cl->c->srec[slot].session;
	}
	cl->c->srec[slot] = (struct fz_srec){ .used = true, .session = a->session,
					       .format = a->format, .as = a->as, .map = m[0] };
	pthread_mutex_unlock(&cl->c->lock);
	if (victim)
		fz_expect(t, "REPLAY_DESTROY of a forgotten session", destroy_raw(cl->fd, victim),
			  RES_OK | RES_E(ENOENT));
}

/* What a setup's mappings may fail with, mapping by mapping. */
struct fz_mapfaults {
	int first_own;		/* first mapping with a bad field of its own, or -1 */
	int first_maybe;	/* first whose lookup may fail, or -1 */
	int first_definite;	/* first whose lookup must fail, or -1 */
};

static bool map_overlaps(const struct accmap_replay_map *maps, uint32_t i)
{
	const struct accmap_replay_map *m = &maps[i];

	for (uint32_t j = 0; j < i; j++) {
		if (m->gpu_va < maps[j].gpu_va + maps[j].length &&
		    maps[j].gpu_va < m->gpu_va + m->length)
			return true;
	}
	return false;
}

/*
 * Builds @n mappings over buffers of @cl below 1 << @va_bits, one of them
 * (sometimes) with a fault; adds the faults to @x and says where they are.
 */
static void setup_maps(struct fz_thread *t, struct fz_cl *cl, uint32_t n, uint32_t va_bits,
		       struct fz_exp *x, struct fz_mapfaults *mf)
{
	struct accmap_replay_map *maps = t->rmaps;
	uint64_t top = 1ULL << (va_bits < 64 ? va_bits : 63), va;
	int bad_map = one_in(t, 6) ? (int)below(t, n) : -1;

	va = (below(t, top / GPU_PAGE / 2)) * GPU_PAGE;
	mf->first_own = -1;
	mf->first_maybe = -1;
	mf->first_definite = -1;
	for (uint32_t i = 0; i < n; i++) {
		struct accmap_replay_map *m = &maps[i];
		struct fz_exp own, look;
		uint64_t bpages, end;
		struct fz_idk k;

		pick_id(t, cl, &k, true);
		if (k.h && k.h->fromva && i != (uint32_t)bad_map) {
			/* Jobs would write the scratch pages VERIFY checks. */
			k.id = 0;
			k.h = NULL;
			k.exists = NO;
		}
		bpages = (k.size ? k.size : env.page) / GPU_PAGE;
		memset(m, 0, sizeof(*m));
		m->id = k.id;
		m->offset = below(t, bpages) * GPU_PAGE;
		m->length = range(t, 1, bpages - m->offset / GPU_PAGE < 64 ?
					bpages - m->offset / GPU_PAGE : 64) * GPU_PAGE;
		m->flags = ACCMAP_REPLAY_MAP_READ;
		if (k.readonly == NO && one_in(t, 2))
			m->flags |= ACCMAP_REPLAY_MAP_WRITE;
		if (one_in(t, 4))
			m->flags |= ACCMAP_REPLAY_MAP_EXEC;
		m->attr = (uint32_t)below(t, ACCMAP_REPLAY_ATTR_MAX + 1);
		va += one_in(t, 4) ? below(t, 4) * GPU_PAGE : 0;
		if (one_in(t, 8))
			va = (va + (2ULL << 20)) & ~((2ULL << 20) - 1);
		m->gpu_va = va;
		if (va + m->length > top) {
			va = 0;
			m->gpu_va = 0;
		}
		va += m->length;

		if ((int)i == bad_map) {
			switch (below(t, 15)) {
			case 0:
				m->pad = 1;
				break;
			case 1:
				m->flags |= 1U << range(t, 3, 31);
				break;
			case 2:
				m->flags &= ~ACCMAP_REPLAY_MAP_READ;
				break;
			case 3:
				m->attr = ACCMAP_REPLAY_ATTR_MAX + 1 + (uint32_t)below(t, 100);
				break;
			case 4:
				m->length = 0;
				break;
			case 5:
				m->gpu_va += range(t, 1, GPU_PAGE - 1);
				break;
			case 6:
				m->offset += range(t, 1, GPU_PAGE - 1);
				break;
			case 7:
				m->length += range(t, 1, GPU_PAGE - 1);
				break;
			case 8:
				m->gpu_va = top - GPU_PAGE * below(t, 2);
				m->length = 2 * GPU_PAGE;
				break;
			case 9:
				m->gpu_va = UINT64_MAX & ~(GPU_PAGE - 1);
				break;
			case 10:
				m->id = 0;
				k.exists = NO;
				break;
			case 11:
				m->offset = (bpages - below(t, 2)) * GPU_PAGE;
				break;
			case 12:
				m->flags |= ACCMAP_REPLAY_MAP_WRITE;
				break;
			case 13:
				if (i) {
					m->gpu_va = maps[i - 1].gpu_va + GPU_PAGE *
						    below(t, maps[i - 1].length / GPU_PAGE);
					break;
				}
				fallthrough;
			default:
				m->length = boundary(t) & ~(GPU_PAGE - 1);
				break;
			}
		}
		exp_init(&own);
		fault_if(&own, EINVAL, m->pad || (m->flags & ~ACCMAP_REPLAY_MAP_VALID_FLAGS) ||
			 !(m->flags & ACCMAP_REPLAY_MAP_READ) || m->attr > ACCMAP_REPLAY_ATTR_MAX ||
			 !m->length || m->gpu_va % GPU_PAGE || m->offset % GPU_PAGE ||
			 m->length % GPU_PAGE ||
			 __builtin_add_overflow(m->gpu_va, m->length, &end) || end > top);
		exp_init(&look);
		if (!own.definite) {
			fault_id(&look, &k, true);
			if (!__builtin_add_overflow(m->offset, m->length, &end))
				fault(&look, EINVAL, tri_beyond(&k, end));
			else
				fault(&look, EINVAL, tri_and(k.exists, YES));
			if (m->flags & ACCMAP_REPLAY_MAP_WRITE)
				fault(&look, EACCES, tri_and(k.exists, k.readonly));
			fault_if(&look, EEXIST, map_overlaps(maps, i));
		}
		if (own.definite && mf->first_own < 0)
			mf->first_own = (int)i;
		if (look.may && mf->first_maybe < 0)
			mf->first_maybe = (int)i;
		if (look.definite && mf->first_definite < 0)
			mf->first_definite = (int)i;
		x->may |= own.may | look.may;
		x->definite |= own.definite | look.definite;
		if (k.h && (m->flags & ACCMAP_REPLAY_MAP_WRITE))
			sh_share(k.h);
	}
}

/* Fills the private client with sessions up to the limit: the next must fail with ENOSPC. */
static void sess_flood(struct fz_thread *t, struct accmap_replay_map *m)
{
	unsigned int keep = t->ns;

	while (t->ns <= FZ_SESS_MAX && !fz_stopped()) {
		struct accmap_replay_setup a = {
			.maps = (uintptr_t)m, .nr_maps = 1, .target = env.sim,
			.format = ACCMAP_PGT_MALI_AARCH64_4K, .va_bits = ACCMAP_REPLAY_VA_BITS_MAX,
		};
		int ret = ioctl(t->own, ACCMAP_IOC_REPLAY_SETUP, &a) ? -errno : 0;

		if (t->ns == FZ_SESS_MAX) {
			fz_expect(t, "REPLAY_SETUP beyond 64 sessions", ret, RES_E(ENOSPC));
			break;
		}
		if (!fz_expect(t, "REPLAY_SETUP while filling the session table", ret, RES_OK) ||
		    ret)
			break;
		if (sess_find(t, a.session) || !a.session || a.session > FZ_SESS_MAX) {
			FZ_FAIL(t, "REPLAY_SETUP gave session %u, live already or out of range",
				a.session);
			break;
		}
		t->s[t->ns++] = (struct fz_sess){ .id = a.session, .format = a.format, .map = *m };
	}
	while (t->ns > keep && !fz_stopped())
		sess_drop(t, t->ns - 1);
}

static bool op_rsetup(struct fz_thread *t)
{
	struct accmap_replay_setup a;
	struct fz_mapfaults mf;
	bool intact, top_bad;
	struct fz_exp x;
	struct fz_cl cl;
	uint32_t n;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	if (cl.priv && t->ns >= FZ_SESS_KEEP)
		sess_drop(t, (unsigned int)below(t, t->ns));
	n = one_in(t, 64) ? (uint32_t)range(t, 64, FZ_RMAPS_MAX) : (uint32_t)range(t, 1, 4);
	memset(&a, 0, sizeof(a));
	a.maps = (uintptr_t)t->rmaps;
	a.nr_maps = n;
	a.target = env.sim;
	a.format = (uint32_t)below(t, ACCMAP_PGT_COUNT);
	a.as = (uint32_t)below(t, SIM_AS_COUNT);
	a.va_bits = (uint32_t)range(t, ACCMAP_REPLAY_VA_BITS_MIN, ACCMAP_REPLAY_VA_BITS_MAX);
	a.session = GARBAGE_U32;
	a.failed_map = GARBAGE_U32;
	a.table_pages = GARBAGE_U32;
	exp_init(&x);
	setup_maps(t, &cl, n, a.va_bits, &x, &mf);
	if (cl.priv && !x.may && t->ns < 2 && one_in(t, 256) && t->rmaps[0].length) {
		sess_flood(t, &t->rmaps[0]);
		cl_put(&cl);
		return true;
	}
	/* Arguments of the call as a whole: checked before any mapping. */
	top_bad = true;
	switch (below(t, 24)) {
	case 0:
		a.nr_maps = one_in(t, 2) ? 0 : FZ_RMAPS_MAX + 1;
		fault(&x, EINVAL, YES);
		break;
	case 1:
		a.va_bits = one_in(t, 2) ? ACCMAP_REPLAY_VA_BITS_MIN - 1 - (uint32_t)below(t, 32) :
					   ACCMAP_REPLAY_VA_BITS_MAX + 1 + (uint32_t)below(t, 100);
		fault(&x, EINVAL, YES);
		break;
	case 2:
		a.format = ACCMAP_PGT_COUNT + (uint32_t)below(t, 100);
		fault(&x, EINVAL, YES);
		break;
	case 3:
		a.target = env.ntargets + (uint32_t)below(t, 4);
		fault(&x, ENOENT, YES);
		break;
	case 4:
		a.as = SIM_AS_COUNT + (uint32_t)below(t, 100);
		fault(&x, EINVAL, YES);
		break;
	case 5:
		a.flags = (uint32_t)range(t, 1, UINT32_MAX);
		fault(&x, EINVAL, YES);
		break;
	case 6:
		a.pad = (uint32_t)range(t, 1, UINT32_MAX);
		fault(&x, EINVAL, YES);
		break;
	case 7:
		a.maps = 0;
		fault(&x, EFAULT, YES);
		break;
	case 8:		/* the list runs into the guard page after t->rmaps */
		a.maps = (uintptr_t)(t->rmaps + FZ_RMAPS_MAX) -
			 range(t, 1, n * sizeof(*t->rmaps) - 1);
		fault(&x, EFAULT, YES);
		break;
	default:
		top_bad = false;
		break;
	}
	/* A register window only with a fault that stops the setup before it is built. */
	if (!top_bad && mf.first_own >= 0 && env.ntargets > 1 && one_in(t, 2))
		a.target = (uint32_t)range(t, 1, env.ntargets - 1);
	x.may |= RES_E(ENOMEM);
	if (!cl.priv)
		x.may |= RES_E(ENOSPC);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_REPLAY_SETUP, &a, exp_allowed(&x), "REPLAY_SETUP",
		       &intact);
	if (!intact) {
		cl_put(&cl);
		return true;
	}
	if (!ret) {
		if (!a.session || a.session > FZ_SESS_MAX || a.failed_map != NO_INDEX ||
		    !a.table_pages || (cl.priv && sess_find(t, a.session)))
			FZ_FAIL(t, "REPLAY_SETUP: session %u failed_map %#x table_pages %u",
				a.session, a.failed_map, a.table_pages);
		else if (cl.priv)
			t->s[t->ns++] = (struct fz_sess){ .id = a.session, .format = a.format,
							  .as = a.as, .map = t->rmaps[0] };
		else
			srec_add(t, &cl, &a);
	} else if (a.session || a.table_pages) {
		FZ_FAIL(t, "REPLAY_SETUP failed with %s: session %u table_pages %u", ename(-ret),
			a.session, a.table_pages);
	} else if (top_bad || ret == -ENOSPC || ret == -EFAULT) {
		if (a.failed_map != NO_INDEX)
			FZ_FAIL(t, "REPLAY_SETUP failed with %s before the mappings: failed_map %u",
				ename(-ret), a.failed_map);
	} else if (ret == -ENOMEM) {
		if (a.failed_map != NO_INDEX && a.failed_map >= a.nr_maps)
			FZ_FAIL(t, "REPLAY_SETUP: ENOMEM with failed_map %u", a.failed_map);
	} else if (mf.first_own >= 0) {
		if (ret != -EINVAL || a.failed_map != (uint32_t)mf.first_own)
			FZ_FAIL(t, "REPLAY_SETUP: %s failed_map %u, expected EINVAL at %d",
				ename(-ret), a.failed_map, mf.first_own);
	} else if (a.failed_map == NO_INDEX || (int)a.failed_map < mf.first_maybe ||
		   (mf.first_definite >= 0 && (int)a.failed_map > mf.first_definite) ||
		   a.failed_map >= a.nr_maps) {
		FZ_FAIL(t, "REPLAY_SETUP: %s, failed_map %u; faults maybe from %d, surely at %d",
			ename(-ret), a.failed_map, mf.first_maybe, mf.first_definite);
	}
	cl_put(&cl);
	return true;
}

static bool op_rdestroy(struct fz_thread *t)
{
	struct accmap_replay_destroy a = { 0 };
	struct fz_sess *s = NULL;
	struct fz_exp x;
	struct fz_cl cl;
	bool intact;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	exp_init(&x);
	if (cl.priv) {
		if (t->ns && !one_in(t, 4))
			a.session = t->s[below(t, t->ns)].id;
		else
			a.session = one_in(t, 2) ? t->stale_sess : boundary32(t);
		s = sess_find(t, a.session);
		fault_if(&x, ENOENT, !s);
	} else {
		a.session = (uint32_t)range(t, 0, FZ_SESS_MAX + 1);
		fault(&x, ENOENT, a.session && a.session <= FZ_SESS_MAX ? MAYBE : YES);
	}
	if (one_in(t, 24)) {
		a.pad = (uint32_t)range(t, 1, UINT32_MAX);
		fault(&x, EINVAL, YES);
	}
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_REPLAY_DESTROY, &a, exp_allowed(&x),
		       "REPLAY_DESTROY", &intact);
	if (!ret && intact && s) {
		t->stale_sess = s->id;
		*s = t->s[--t->ns];
	}
	cl_put(&cl);
	return true;
}

/* ---- replay: runs ---- */

/* Register within an address space block, or -1 (the kernel's register rules). */
static int as_reg(uint32_t offset)
{
	if (offset < MALI_AS(0) || offset >= MALI_AS(MALI_AS_BLOCKS))
		return -1;
	return (int)((offset - MALI_AS(0)) % 0x40);
}

#define F_OFFSET	BIT(0)
#define F_VALUE		BIT(1)
#define F_MASK		BIT(2)
#define F_TIMEOUT	BIT(3)
#define F_IRQ		BIT(4)

/* The verdict of the isolation rules for an op, if it is otherwise well formed. */
static int rop_as_rule(const struct accmap_replay_op *op, uint32_t format, int as)
{
	uint32_t off = op->offset, v = op->value, mode = v & 0xf, ina = v & TRANSCFG_INA_MASK;
	int reg = as_reg(off), own;

	/* A CAPTURED write's value is known only as it runs: no rule on it here. */
	bool known = !(op->flags & ACCMAP_REPLAY_OP_CAPTURED);

	if (op->op == ACCMAP_REPLAY_OP_WAIT_IRQ || op->op == ACCMAP_REPLAY_OP_DELAY)
		return NO;
	if (reg >= 0) {
		switch (reg) {
		case 0x00:
		case 0x04:
			own = op->op != ACCMAP_REPLAY_OP_WRITE_ROOT ||
			      reg != (op->flags & ACCMAP_REPLAY_OP_HI ? 0x04 : 0x00);
			break;
		case 0x30:
			own = op->op == ACCMAP_REPLAY_OP_WRITE && known &&
			      ((mode != TRANSCFG_UNMAPPED &&
				mode != (format == ACCMAP_PGT_MALI_AARCH64_4K ?
					 TRANSCFG_AARCH64_4K : TRANSCFG_LEGACY)) ||
			       (ina && ina != TRANSCFG_INA_48) || (v & 3U << 24) == 3U << 24 ||
			       (v & ~(0xfU | TRANSCFG_INA_MASK | TRANSCFG_POLICY)));
			break;
		case 0x34:
			own = op->op == ACCMAP_REPLAY_OP_WRITE && known && v;
			break;
		default:
			own = op->op == ACCMAP_REPLAY_OP_WRITE_ROOT;
			break;
		}
		/* Bad on the session's own: bad anywhere; else the AS decides. */
		if (own)
			return YES;
		if (as < 0)
			return MAYBE;
		return (off - MALI_AS(0)) / 0x40 != (uint32_t)as ? YES : NO;
	}
	if (op->op == ACCMAP_REPLAY_OP_WRITE_ROOT)
		return YES;
	if (op->op != ACCMAP_REPLAY_OP_WRITE || !known)
		return NO;
	if (off >= MALI_JS(0) && off < MALI_JS(16) &&
	    ((off - MALI_JS(0)) % 0x80 == 0x18 || (off - MALI_JS(0)) % 0x80 == 0x58))
		return as < 0 ? MAYBE : (v & 0xf) != (uint32_t)as ? YES : NO;
	if (off == PRFCNT_CONFIG && (v & 3))
		return as < 0 ? MAYBE : ((v >> 4) & 0xf) != (uint32_t)as ? YES : NO;
	return NO;
}

/*
 * Whether @op is malformed for a session in @format on address space @as
 * (-1: unknown) (Documentation: "Operations"): NO, YES, or MAYBE when
 * only the address space would tell.
 */
static int rop_bad(const struct accmap_replay_op *op, uint32_t format, int as)
{
	static const struct {
		uint32_t fields, flags, tmin, tmax;
	} shapes[] = {
		[ACCMAP_REPLAY_OP_WRITE] = { F_OFFSET | F_VALUE, ACCMAP_REPLAY_OP_CAPTURED, 0, 0 },
		[ACCMAP_REPLAY_OP_READ] = { F_OFFSET | F_VALUE | F_MASK,
					    ACCMAP_REPLAY_OP_STRICT | ACCMAP_REPLAY_OP_CAPTURE,
					    0, 0 },
		[ACCMAP_REPLAY_OP_POLL] = { F_OFFSET | F_VALUE | F_MASK | F_TIMEOUT, 0, 1,
					    ACCMAP_REPLAY_TIMEOUT_MAX_US },
		[ACCMAP_REPLAY_OP_WAIT_IRQ] = { F_MASK | F_TIMEOUT | F_IRQ, 0, 1,
						ACCMAP_REPLAY_TIMEOUT_MAX_US },
		[ACCMAP_REPLAY_OP_DELAY] = { F_TIMEOUT, 0, 0, ACCMAP_REPLAY_DELAY_MAX_US },
		[ACCMAP_REPLAY_OP_WRITE_ROOT] = { F_OFFSET, ACCMAP_REPLAY_OP_HI, 0, 0 },
	};
	uint32_t f;

	if (!op->op || op->op > ACCMAP_REPLAY_OP_WRITE_ROOT || op->pad)
		return true;
	f = shapes[op->op].fields;
	if ((op->flags & ~shapes[op->op].flags) ||
	    (!(f & F_OFFSET) && op->offset) || (!(f & F_VALUE) && op->value) ||
	    (!(f & F_MASK) && op->mask) || (!(f & F_TIMEOUT) && op->timeout_us) ||
	    (!(f & F_IRQ) && op->irq))
		return true;
	if ((f & F_OFFSET) && (op->offset % 4 || op->offset > SIM_WINDOW - 4))
		return true;
	if ((f & F_TIMEOUT) && (op->timeout_us < shapes[op->op].tmin ||
				op->timeout_us > shapes[op->op].tmax))
		return true;
	if ((f & F_IRQ) && (op->irq >= ACCMAP_REPLAY_IRQ_COUNT || !op->mask))
		return true;
	if ((op->flags & ACCMAP_REPLAY_OP_CAPTURE) && (op->flags & ACCMAP_REPLAY_OP_STRICT))
		return true;
	if ((op->flags & ACCMAP_REPLAY_OP_CAPTURED) && op->value)
		return true;
	return rop_as_rule(op, format, as);
}

/*
 * The first malformed op, -1 for none, -2 if the address space would tell.
 * Whether a CAPTURED WRITE has a value (the session kept one, from this
 * run or an earlier) is known only as it runs: the caller allows EINVAL.
 */
static int rops_first_bad(const struct accmap_replay_op *ops, uint32_t n, uint32_t format, int as)
{
	for (uint32_t i = 0; i < n; i++) {
		int bad = rop_bad(&ops[i], format, as);

		if (bad == YES)
			return (int)i;
		if (bad == MAYBE)
			return -2;
	}
	return -1;
}

/* A register offset of the window that is not TRANSTAB. */
static uint32_t rand_reg(struct fz_thread *t)
{
	static const uint32_t regs[] = {
		0x0000, 0x0004, 0x0014, 0x0018, 0x001c, 0x0020, 0x0024, 0x0028, 0x002c, 0x0030,
		0x0034, 0x0038, 0x003c, 0x0040, 0x0100, 0x0110, 0x0120, 0x0140, 0x0150, 0x0160,
		0x0180, 0x0190, 0x01a0, 0x01c0, 0x01d0, 0x01e0, 0x0200, 0x1000, 0x1004, 0x1008,
		0x100c, 0x1010, 0x2000, 0x2004, 0x2008, 0x200c,
	};
	static const uint32_t js[] = { 0x00, 0x04, 0x08, 0x10, 0x18, 0x20, 0x24, 0x40, 0x44, 0x50,
				       0x58, 0x60, 0x70 };
	static const uint32_t as[] = { 0x08, 0x0c, 0x10, 0x14, 0x18, 0x1c, 0x20, 0x24, 0x28, 0x34,
				       0x38, 0x3c };
	uint32_t off;

	switch (below(t, 5)) {
	case 0:
		return MALI_JS(below(t, 4)) + js[below(t, TAP_ARRAY_SIZE(js))];
	case 1:
		return MALI_AS(below(t, MALI_AS_BLOCKS)) + as[below(t, TAP_ARRAY_SIZE(as))];
	case 2:
		off = (uint32_t)below(t, SIM_WINDOW / 4) * 4;
		return as_reg(off) == 0 || as_reg(off) == 4 || as_reg(off) == 0x30 ? 0 : off;
	default:
		return regs[below(t, TAP_ARRAY_SIZE(regs))];
	}
}

/* One well-formed op for a session in @format on address space @as (-1: unknown). */
static void rop_valid(struct fz_thread *t, struct accmap_replay_op *op, uint32_t format, int as)
{
	uint32_t asn = as >= 0 && !one_in(t, 16) ? (uint32_t)as :
					       (uint32_t)below(t, MALI_AS_BLOCKS);

	memset(op, 0, sizeof(*op));
	switch (below(t, 12)) {
	case 0:
	case 1:
	case 2:
		op->op = ACCMAP_REPLAY_OP_WRITE;
		op->offset = rand_reg(t);
		op->value = one_in(t, 2) ? (uint32_t)rnd(t) : (uint32_t)below(t, 16);
		if (one_in(t, 6)) {
			op->offset = MALI_AS(asn) + 0x30;
			op->value = one_in(t, 3) ? TRANSCFG_UNMAPPED :
				    format == ACCMAP_PGT_MALI_AARCH64_4K ? TRANSCFG_AARCH64_4K :
									 TRANSCFG_LEGACY;
			op->value |= (uint32_t)rnd(t) & (one_in(t, 8) ? ~0xfU : TRANSCFG_POLICY);
		}
		break;
	case 3:
	case 4:
	case 5:
		op->op = ACCMAP_REPLAY_OP_READ;
		op->offset = rand_reg(t);
		op->mask = (uint32_t)rnd(t);
		op->value = (uint32_t)rnd(t) & op->mask;
		if (one_in(t, 4)) {
			op->flags = ACCMAP_REPLAY_OP_STRICT;
			op->offset = 0;
			op->mask = UINT32_MAX;
			op->value = one_in(t, 4) ? (uint32_t)rnd(t) : SIM_GPU_ID;
		}
		break;
	case 6:
		op->op = ACCMAP_REPLAY_OP_POLL;
		op->timeout_us = (uint32_t)range(t, 1, FZ_WAIT_MAX_US);
		if (one_in(t, 2)) {
			op->offset = 0;
			op->mask = UINT32_MAX;
			op->value = SIM_GPU_ID;
		} else {
			op->offset = rand_reg(t);
			op->mask = (uint32_t)rnd(t);
			op->value = (uint32_t)rnd(t) & op->mask;
		}
		break;
	case 7:
		op->op = ACCMAP_REPLAY_OP_WAIT_IRQ;
		op->irq = (uint32_t)below(t, ACCMAP_REPLAY_IRQ_COUNT);
		op->mask = (uint32_t)rnd(t) | 1U << below(t, 32);
		op->timeout_us = (uint32_t)range(t, 1, FZ_WAIT_MAX_US);
		break;
	case 8:
		op->op = ACCMAP_REPLAY_OP_DELAY;
		op->timeout_us = (uint32_t)below(t, FZ_WAIT_MAX_US + 1);
		break;
	case 9:
		op->op = ACCMAP_REPLAY_OP_WRITE_ROOT;
		op->offset = MALI_AS(asn);
		if (one_in(t, 2)) {
			op->flags = ACCMAP_REPLAY_OP_HI;
			op->offset += 4;
		}
		break;
	default:
		op->op = ACCMAP_REPLAY_OP_READ;
		op->offset = rand_reg(t);
		break;
	}
}

/* Makes @op malformed, whatever the session's format. */
static void rop_break(struct fz_thread *t, struct accmap_replay_op *op)
{
	switch (below(t, 12)) {
	case 0:
		op->op = one_in(t, 2) ? 0 : ACCMAP_REPLAY_OP_WRITE_ROOT + 1 + (uint32_t)below(t, 9);
		break;
	case 1:
		op->pad = (uint32_t)range(t, 1, UINT32_MAX);
		break;
	case 2:
		memset(op, 0, sizeof(*op));
		op->op = ACCMAP_REPLAY_OP_WRITE;
		if (one_in(t, 2))
			op->offset = SIM_WINDOW + 4 * (uint32_t)below(t, 100);
		else
			op->offset = 4 * (uint32_t)below(t, SIM_WINDOW / 4) +
				     (uint32_t)range(t, 1, 3);
		break;
	case 3:
		memset(op, 0, sizeof(*op));
		op->op = ACCMAP_REPLAY_OP_DELAY;
		op->timeout_us = ACCMAP_REPLAY_DELAY_MAX_US + 1 + (uint32_t)below(t, 1000);
		break;
	case 4:
		memset(op, 0, sizeof(*op));
		op->op = one_in(t, 2) ? ACCMAP_REPLAY_OP_POLL : ACCMAP_REPLAY_OP_WAIT_IRQ;
		op->mask = 1;
		op->timeout_us = one_in(t, 2) ? 0 : ACCMAP_REPLAY_TIMEOUT_MAX_US + 1;
		break;
	case 5:
		memset(op, 0, sizeof(*op));
		op->op = ACCMAP_REPLAY_OP_WAIT_IRQ;
		op->timeout_us = 1;
		if (one_in(t, 2))
			op->irq = ACCMAP_REPLAY_IRQ_COUNT + (uint32_t)below(t, 10);
		else
			op->mask = 0;
		op->mask |= op->irq ? 1 : 0;
		break;
	case 6:		/* TRANSTAB through a plain op */
		memset(op, 0, sizeof(*op));
		op->op = (uint32_t)range(t, ACCMAP_REPLAY_OP_WRITE, ACCMAP_REPLAY_OP_READ);
		op->offset = MALI_AS(below(t, MALI_AS_BLOCKS)) + 4 * (uint32_t)below(t, 2);
		break;
	case 7:		/* identity mode */
		memset(op, 0, sizeof(*op));
		op->op = ACCMAP_REPLAY_OP_WRITE;
		op->offset = MALI_AS(below(t, MALI_AS_BLOCKS)) + 0x30;
		op->value = one_in(t, 2) ? TRANSCFG_IDENTITY : (uint32_t)range(t, 7, 15);
		break;
	case 8:		/* the root anywhere else */
		memset(op, 0, sizeof(*op));
		op->op = ACCMAP_REPLAY_OP_WRITE_ROOT;
		op->offset = one_in(t, 2) ? rand_reg(t) : MALI_AS(below(t, MALI_AS_BLOCKS));
		op->flags = op->offset % 0x40 ? 0 : ACCMAP_REPLAY_OP_HI;
		break;
	case 9:		/* a flag the op does not take */
		if (one_in(t, 2))
			op->flags |= 1U << range(t, 2, 31);
		else if (op->op == ACCMAP_REPLAY_OP_READ)
			op->flags |= ACCMAP_REPLAY_OP_HI;
		else
			op->flags |= ACCMAP_REPLAY_OP_STRICT;
		break;
	default:	/* a field the op does not use */
		memset(op, 0, sizeof(*op));
		op->op = one_in(t, 2) ? ACCMAP_REPLAY_OP_DELAY : ACCMAP_REPLAY_OP_WRITE_ROOT;
		op->offset = MALI_AS(0);
		op->irq = 1;
		break;
	}
}

static void rop_write(struct accmap_replay_op *op, uint32_t offset, uint32_t value)
{
	memset(op, 0, sizeof(*op));
	op->op = ACCMAP_REPLAY_OP_WRITE;
	op->offset = offset;
	op->value = value;
}

/*
 * A job for the model: a descriptor (of the model's own compute job,
 * mostly) written into the session's first buffer, and the ops that
 * power up, configure the address space, submit and wait.
 */
static uint32_t rops_job(struct fz_thread *t, int fd, const struct accmap_replay_map *m,
			 uint32_t format, uint32_t as, struct accmap_replay_op *ops)
{
	uint64_t desc[10] = { 0 }, head, room = m->length < 4096 ? m->length : 4096;
	uint32_t slot = (uint32_t)below(t, SIM_JS_COUNT), n = 0;
	struct accmap_sim_job *job = (void *)((uint8_t *)desc + ACCMAP_SIM_JOB_OFFSET);
	uint64_t mat = m->gpu_va + room / 2;
	uint8_t type;
	int ret;

	head = m->gpu_va + below(t, room / 64 > 2 ? room / 64 - 2 : 1) * 64;
	/* The job type in bits 7:1, bit 0 for a 64-bit next pointer. */
	type = one_in(t, 8) ? (uint8_t)range(t, 1, 9) : ACCMAP_SIM_JOB_TYPE;
	((uint8_t *)desc)[0x10] = type << 1 | 1;
	if (one_in(t, 8))
		desc[3] = one_in(t, 2) ? head : rnd(t);
	if (one_in(t, 8))
		job->op = (uint32_t)rnd(t);
	else
		job->op = (uint32_t)range(t, ACCMAP_SIM_OP_MATMUL_I32, ACCMAP_SIM_OP_VADD_I32);
	job->m = (uint32_t)range(t, 1, 8);
	job->n = (uint32_t)range(t, 1, 8);
	job->k = (uint32_t)range(t, 1, 8);
	if (job->op == ACCMAP_SIM_OP_VADD_I32 && !one_in(t, 8)) {
		job->m = 1;
		job->k = 1;
	}
	job->a = mat;
	job->b = mat + 4 * (uint32_t)below(t, 64);
	job->c = one_in(t, 8) ? rnd(t) & ~3ULL : mat + 4 * (uint32_t)below(t, 64);
	ret = am_write(fd, m->id, m->offset + (head - m->gpu_va), desc, sizeof(desc));
	fz_expect(t, "WRITE of a job descriptor", ret,
		  RES_OK | RES_E(ENOENT) | RES_E(EACCES) | RES_E(ENODATA) | RES_E(ERANGE));

	rop_write(&ops[n++], 0x01a0, 1);		/* L2_PWRON */
	rop_write(&ops[n++], 0x0180, 0xff);		/* SHADER_PWRON */
	rop_write(&ops[n++], 0x0190, 1);		/* TILER_PWRON */
	rop_write(&ops[n++], MALI_AS(as) + 0x08, (uint32_t)rnd(t));	/* MEMATTR */
	rop_write(&ops[n++], MALI_AS(as) + 0x0c, (uint32_t)rnd(t));
	rop_write(&ops[n++], MALI_AS(as) + 0x30, one_in(t, 16) ? TRANSCFG_UNMAPPED :
		  format == ACCMAP_PGT_MALI_AARCH64_4K ? TRANSCFG_AARCH64_4K : TRANSCFG_LEGACY);
	rop_write(&ops[n++], MALI_AS(as) + 0x34, 0);
	memset(&ops[n], 0, sizeof(ops[n]));
	ops[n].op = ACCMAP_REPLAY_OP_WRITE_ROOT;
	ops[n++].offset = MALI_AS(as);
	memset(&ops[n], 0, sizeof(ops[n]));
	ops[n].op = ACCMAP_REPLAY_OP_WRITE_ROOT;
	ops[n].flags = ACCMAP_REPLAY_OP_HI;
	ops[n++].offset = MALI_AS(as) + 4;
	rop_write(&ops[n++], MALI_AS(as) + 0x18, 1);	/* UPDATE */
	rop_write(&ops[n++], 0x1008, UINT32_MAX);	/* JOB_IRQ_MASK */
	rop_write(&ops[n++], 0x2008, UINT32_MAX);	/* MMU_IRQ_MASK */
	rop_write(&ops[n++], MALI_JS(slot) + 0x40, (uint32_t)head);
	rop_write(&ops[n++], MALI_JS(slot) + 0x44, (uint32_t)(head >> 32));
	rop_write(&ops[n++], MALI_JS(slot) + 0x50, 0xff);
	rop_write(&ops[n++], MALI_JS(slot) + 0x58, one_in(t, 16) ? (uint32_t)below(t, 16) : as);
	rop_write(&ops[n++], MALI_JS(slot) + 0x60, 1);	/* START */
	memset(&ops[n], 0, sizeof(ops[n]));
	ops[n].op = ACCMAP_REPLAY_OP_WAIT_IRQ;
	ops[n].irq = ACCMAP_REPLAY_IRQ_JOB;
	ops[n].mask = 1U << slot | 1U << (16 + slot);
	ops[n++].timeout_us = (uint32_t)range(t, 100, FZ_WAIT_MAX_US);
	memset(&ops[n], 0, sizeof(ops[n]));
	ops[n].op = ACCMAP_REPLAY_OP_READ;
	ops[n++].offset = MALI_JS(slot) + 0x24;		/* JS_STATUS */
	rop_write(&ops[n++], 0x1004, UINT32_MAX);	/* JOB_IRQ_CLEAR */
	return n;
}

/* A session to run: its id, whether it lives, its format if known, a mapping of it. */
struct fz_sessk {
	uint32_t id;
	int exists;
	int format;		/* -1: unknown */
	uint32_t as;
	bool has_map;
	struct accmap_replay_map map;
};

static void pick_session(struct fz_thread *t, struct fz_cl *cl, struct fz_sessk *sk)
{
	memset(sk, 0, sizeof(*sk));
	sk->format = -1;
	if (cl->priv) {
		struct fz_sess *s;

		if (t->ns && !one_in(t, 8)) {
			s = &t->s[below(t, t->ns)];
		} else {
			sk->id = one_in(t, 2) ? t->stale_sess :
						(uint32_t)range(t, 0, FZ_SESS_MAX + 1);
			s = sess_find(t, sk->id);
			sk->exists = NO;
		}
		if (s) {
			sk->id = s->id;
			sk->exists = YES;
			sk->format = (int)s->format;
			sk->as = s->as;
			sk->map = s->map;
			sk->has_map = true;
		}
		return;
	}
	if (!one_in(t, 8)) {
		unsigned int start = (unsigned int)below(t, FZ_SREC_MAX);

		pthread_mutex_lock(&cl->c->lock);
		for (unsigned int i = 0; i < FZ_SREC_MAX; i++) {
			struct fz_srec *r = &cl->c->srec[(start + i) % FZ_SREC_MAX];

			if (!r->used)
				continue;
			sk->id = r->session;
			sk->format = (int)r->format;	/* unless the id was handed out again */
			sk->as = r->as;
			sk->map = r->map;
			sk->has_map = true;
			break;
		}
		pthread_mutex_unlock(&cl->c->lock);
	}
	if (!sk->id)
		sk->id = (uint32_t)range(t, 0, FZ_SESS_MAX + 1);
	sk->exists = sk->id && sk->id <= FZ_SESS_MAX ? MAYBE : NO;
	/* Session ids come round again: another session may have this one now. */
	sk->format = -1;
}

static void run_check(struct fz_thread *t, const struct accmap_replay_run *r, int ret, bool listed)
{
	bool bad;

	if (!ret) {
		bad = r->done != r->nr_ops || r->failed_op != NO_INDEX || r->reason ||
		      r->fault_as != NO_INDEX || r->fault_status || r->fault_addr;
	} else if (r->reason == ACCMAP_REPLAY_OK) {
		/* Refused before the ops ran, or a second read that faulted. */
		bad = r->failed_op != NO_INDEX || (ret != -EFAULT && r->done) ||
		      (!listed && r->done) || r->fault_as != NO_INDEX;
	} else {
		static const int errs[] = {
			[ACCMAP_REPLAY_INVALID] = -EINVAL, [ACCMAP_REPLAY_MISMATCH] = -EIO,
			[ACCMAP_REPLAY_TIMEOUT] = -ETIMEDOUT, [ACCMAP_REPLAY_MMU_FAULT] = -EIO,
			[ACCMAP_REPLAY_SIGNAL] = -EINTR, [ACCMAP_REPLAY_JOB_FAILED] = -EIO,
		};

		bad = r->reason > ACCMAP_REPLAY_JOB_FAILED || errs[r->reason] != ret ||
		      r->failed_op >= r->nr_ops ||
		      /* Malformed before anything ran, or changed under a running list. */
		      (r->done != r->failed_op &&
		       (r->reason != ACCMAP_REPLAY_INVALID || r->done)) ||
		      (r->reason == ACCMAP_REPLAY_MMU_FAULT ?
		       (r->fault_as != NO_INDEX && r->fault_as >= SIM_AS_COUNT) :
		       /* A failed job: its slot, of the 16 JOB_IRQ has room for. */
		       r->reason == ACCMAP_REPLAY_JOB_FAILED ?
		       (r->fault_as != NO_INDEX && r->fault_as >= 16) :
		       (r->fault_as != NO_INDEX || r->fault_status || r->fault_addr));
	}
	if (bad || r->elapsed_ns == GARBAGE_U64)
		FZ_FAIL(t, "REPLAY_RUN of %u: %s, reason %u done %u failed %#x fault %#x %#x %#llx",
			r->nr_ops, ename(-ret), r->reason, r->done, r->failed_op, r->fault_as,
			r->fault_status, (unsigned long long)r->fault_addr);
}

static bool op_rrun(struct fz_thread *t)
{
	struct accmap_replay_op *ops = t->ops;
	int bad0, bad1, bad;
	struct accmap_replay_run r;
	bool intact, waits = false, strict = false, top_bad = false, cap_write = false;
	struct fz_sessk sk;
	struct fz_exp x;
	struct fz_cl cl;
	uint32_t n;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	pick_session(t, &cl, &sk);
	if (sk.has_map && one_in(t, 3)) {
		struct fz_handle *h = cl.priv ? own_find(t, sk.map.id) : NULL;

		/* The descriptor goes into the buffer. */
		if (h)
			sh_drop(h);
		n = rops_job(t, cl.fd, &sk.map, sk.format >= 0 ? (uint32_t)sk.format :
				(uint32_t)below(t, 2), sk.as, ops);
	} else if (one_in(t, 64)) {
		n = (uint32_t)range(t, 256, FZ_OPS_MAX);
		for (uint32_t i = 0; i < n; i++) {
			memset(&ops[i], 0, sizeof(ops[i]));
			ops[i].op = ACCMAP_REPLAY_OP_READ;
			ops[i].offset = rand_reg(t);
		}
	} else {
		n = (uint32_t)range(t, 1, 12);
		for (uint32_t i = 0; i < n; i++)
			rop_valid(t, &ops[i], sk.format >= 0 ? (uint32_t)sk.format :
					      (uint32_t)below(t, 2),
				  sk.format >= 0 ? (int)sk.as : -1);
	}
	if (one_in(t, 8))
		rop_break(t, &ops[below(t, n)]);
	for (uint32_t i = 0; i < n; i++) {
		waits |= ops[i].op == ACCMAP_REPLAY_OP_POLL ||
			 ops[i].op == ACCMAP_REPLAY_OP_WAIT_IRQ;
		strict |= ops[i].op == ACCMAP_REPLAY_OP_READ &&
			  (ops[i].flags & ACCMAP_REPLAY_OP_STRICT);
		/*
		 * Whether the session holds a value for it, and whether that
		 * meets the session's rules, is known only as it runs.
		 */
		cap_write |= ops[i].op == ACCMAP_REPLAY_OP_WRITE &&
			     (ops[i].flags & ACCMAP_REPLAY_OP_CAPTURED);
	}
	/* Malformed for either format; which one the session has may be unknown. */
	bad0 = rops_first_bad(ops, n, ACCMAP_PGT_MALI_AARCH64_4K, sk.format >= 0 ? (int)sk.as : -1);
	bad1 = rops_first_bad(ops, n, ACCMAP_PGT_MALI_LPAE, sk.format >= 0 ? (int)sk.as : -1);
	bad = sk.format == ACCMAP_PGT_MALI_AARCH64_4K ? bad0 :
	      sk.format == ACCMAP_PGT_MALI_LPAE ? bad1 : (bad0 == bad1 ? bad0 : -2);

	memset(&r, GARBAGE_BYTE, sizeof(r));
	r.ops = (uintptr_t)ops;
	r.nr_ops = n;
	r.session = sk.id;
	r.flags = 0;
	r.pad = 0;
	exp_init(&x);
	switch (below(t, 32)) {
	case 0:
		r.nr_ops = one_in(t, 2) ? 0 : ACCMAP_REPLAY_OPS_MAX + 1;
		top_bad = true;
		break;
	case 1:
		r.flags = (uint32_t)range(t, 1, UINT32_MAX);
		top_bad = true;
		break;
	case 2:
		r.pad = (uint32_t)range(t, 1, UINT32_MAX);
		top_bad = true;
		break;
	case 3:
		r.ops = 0;
		fault(&x, EFAULT, YES);
		break;
	case 4:		/* more ops than there is memory for, up to the guard page */
		r.ops = (uintptr_t)(ops + FZ_OPS_MAX - n);
		memmove(ops + FZ_OPS_MAX - n, ops, n * sizeof(*ops));
		r.nr_ops = n + (uint32_t)range(t, 1, 1 << 16);
		fault(&x, EFAULT, YES);
		break;
	default:
		break;
	}
	fault_if(&x, EINVAL, top_bad);
	fault(&x, ENOENT, tri_not(sk.exists));
	/* A list that cannot all be read and has a malformed op: either error. */
	if (x.may & RES_E(EFAULT) && bad != -1 && r.ops)
		x.may |= RES_E(EINVAL);
	if (!x.definite) {
		if (bad >= 0) {
			fault(&x, EINVAL, YES);
		} else {
			if (bad == -2 || cap_write)
				x.may |= RES_E(EINVAL);
			x.may |= RES_E(EIO) | (waits ? RES_E(ETIMEDOUT) : 0);
		}
	}
	x.may |= RES_E(ENOMEM);
	ret = fz_ioctl(t, cl.fd, ACCMAP_IOC_REPLAY_RUN, &r, exp_allowed(&x), "REPLAY_RUN", &intact);
	if (intact || t->nowb) {
		if (intact)
			run_check(t, &r, ret, !top_bad && r.ops);
		if (intact && ret == -EINVAL && r.reason == ACCMAP_REPLAY_INVALID && bad >= 0 &&
		    r.failed_op != (uint32_t)bad)
			FZ_FAIL(t, "REPLAY_RUN: op %u reported malformed, expected op %d",
				r.failed_op, bad);
		if (intact && ret == -EIO && r.reason == ACCMAP_REPLAY_MISMATCH && !strict)
			FZ_FAIL(t, "REPLAY_RUN: a mismatch without a strict READ");
	}
	cl_put(&cl);
	return true;
}

/* ---- foreign dma-bufs: vgem, the system dma-heap, udmabuf ---- */

/*
 * Linux 6.1's udmabuf keeps the pages of its memfd but not the memfd: once
 * the memfd's last file reference goes, its inode is evicted, and if a
 * udmabuf mapping maps one of its pages by then, the kernel hits
 * VM_BUG_ON_FOLIO(folio_mapped()) in filemap_unaccount_folio().  Closing
 * the memfd right after UDMABUF_CREATE, before anything can map the
 * udmabuf, is safe; a fork() child that inherited the memfd meanwhile and
 * closed it later, at its exit, would not be (the debug kernel crashed so
 * once).  That is udmabuf's bug, not accmap's: fork waits for the memfd
 * to be closed.
 */
static pthread_rwlock_t fz_memfd_lock = PTHREAD_RWLOCK_INITIALIZER;

static int udmabuf_make(size_t size)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .offset = 0, .size = size };
	int memfd, fd = -1;

	pthread_rwlock_rdlock(&fz_memfd_lock);
	memfd = memfd_create("fuzz-udmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (memfd < 0) {
		fd = -errno;
		pthread_rwlock_unlock(&fz_memfd_lock);
		return fd;
	}
	if (ftruncate(memfd, (off_t)size) || fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		fd = -errno;
		goto out;
	}
	c.memfd = (uint32_t)memfd;
	fd = ioctl(env.udmabuf, UDMABUF_CREATE, &c);
	if (fd < 0)
		fd = -errno;
out:
	close(memfd);
	pthread_rwlock_unlock(&fz_memfd_lock);
	return fd;
}

static bool op_foreign(struct fz_thread *t)
{
	size_t size = range(t, 1, 8) * env.page;
	int kind = (int)below(t, 3), fd = -1;

	if (kind == 0 && env.vgem >= 0) {
		uint32_t handle;

		fd = vgem_foreign_dmabuf(env.vgem, size, &handle);
		if (fz_expect(t, "a vgem dumb buffer's export", fd < 0 ? fd : 0, RES_OK))
			vgem_close_handle(env.vgem, handle);
		/* vgem rounds the buffer up to whole rows of 4 KiB. */
		size = (size + 4095) / 4096 * 4096;
	} else if (kind == 1 && env.dma_heap >= 0) {
		struct dma_heap_allocation_data d = {
			.len = size, .fd_flags = O_RDWR | O_CLOEXEC,
		};

		fd = ioctl(env.dma_heap, DMA_HEAP_IOCTL_ALLOC, &d) ? -errno : (int)d.fd;
		fz_expect(t, "DMA_HEAP_IOCTL_ALLOC", fd < 0 ? fd : 0, RES_OK);
	} else if (kind == 2 && env.udmabuf >= 0) {
		fd = udmabuf_make(size);
		fz_expect(t, "UDMABUF_CREATE", fd < 0 ? fd : 0, RES_OK | RES_E(ENOMEM));
	} else {
		return false;
	}
	if (fd >= 0)
		fd_add(fd, FD_FOREIGN, size, false, "vhu"[kind], NULL);
	return true;
}

/*
 * vgem handles of imported accmap dma-bufs.  Importing a dma-buf the DRM
 * file has imported already gives the same handle, so handles are counted
 * here and closed with the last count; the lock spans the ioctls too.
 */
#define FZ_VGEM_MAX	64

static struct {
	uint32_t handle;
	unsigned int count;
} fz_vgem[FZ_VGEM_MAX];
static pthread_mutex_t fz_vgem_lock = PTHREAD_MUTEX_INITIALIZER;

static void vgem_put(struct fz_thread *t, uint32_t handle)
{
	pthread_mutex_lock(&fz_vgem_lock);
	for (unsigned int i = 0; i < FZ_VGEM_MAX; i++) {
		if (!fz_vgem[i].count || fz_vgem[i].handle != handle)
			continue;
		if (!--fz_vgem[i].count)
			fz_expect(t, "GEM_CLOSE", vgem_close_handle(env.vgem, handle), RES_OK);
		break;
	}
	pthread_mutex_unlock(&fz_vgem_lock);
}

/* An accmap dma-buf imported by vgem (a real importer), maybe exported back (PRIME). */
static bool op_vgem(struct fz_thread *t)
{
	unsigned int free_slot = FZ_VGEM_MAX, i;
	struct fz_fd e;
	uint32_t handle;
	int slot, ret, fd;

	if (env.vgem < 0)
		return false;
	if (t->nvgem && (t->nvgem == FZ_VGEM_KEEP || one_in(t, 2))) {
		i = (unsigned int)below(t, t->nvgem);
		vgem_put(t, t->vgem_handles[i]);
		t->vgem_handles[i] = t->vgem_handles[--t->nvgem];
		return true;
	}
	slot = fd_claim(t, FD_BUF, false, &e);
	if (slot < 0)
		return false;
	pthread_mutex_lock(&fz_vgem_lock);
	/*
	 * DRM maps an import both ways: read-only dma-bufs refuse it, at the
	 * import where vgem maps then, else when it maps (never, in vgem).
	 */
	ret = vgem_import(env.vgem, e.fd, &handle);
	fz_expect(t, "vgem import of an accmap dma-buf", ret,
		  RES_E(ENOMEM) | (e.rdonly && env.vgem_maps ? RES_E(EACCES) : RES_OK));
	for (i = 0; !ret && i < FZ_VGEM_MAX; i++) {
		if (fz_vgem[i].count && fz_vgem[i].handle == handle)
			break;
		if (!fz_vgem[i].count && free_slot == FZ_VGEM_MAX)
			free_slot = i;
	}
	if (!ret && i == FZ_VGEM_MAX && free_slot == FZ_VGEM_MAX) {
		/* No room to count it: let it go at once. */
		fz_expect(t, "GEM_CLOSE", vgem_close_handle(env.vgem, handle), RES_OK);
		ret = -ENOSPC;
	} else if (!ret) {
		if (i == FZ_VGEM_MAX) {
			i = free_slot;
			fz_vgem[i].handle = handle;
		}
		fz_vgem[i].count++;
	}
	pthread_mutex_unlock(&fz_vgem_lock);
	if (!ret) {
		if (one_in(t, 2)) {
			/* The re-export of an import is accmap's own dma-buf again. */
			fd = vgem_export(env.vgem, handle);
			if (fz_expect(t, "vgem re-export", fd < 0 ? fd : 0, RES_OK))
				fd_add(fd, FD_BUF, e.size, e.rdonly, 0, NULL);
		}
		t->vgem_handles[t->nvgem++] = handle;
	}
	fd_release(slot);
	return true;
}

/* ---- dma-bufs passed to and from the helper process ---- */

enum { MSG_PASS = 1, MSG_REPLY, MSG_QUIT };

struct fz_msg {
	uint32_t type;
	uint32_t rdonly;
	uint64_t size;
};

static int msg_send(int sock, const struct fz_msg *m, int fd, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)m, .iov_len = sizeof(*m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *cm;

		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	return sendmsg(sock, &msg, flags | MSG_NOSIGNAL) == sizeof(*m) ? 0 : -errno;
}

/* Receives a message; *fd is the fd it carried or -1.  Returns 0, or -errno (-EPIPE at the end). */
static int msg_recv(int sock, struct fz_msg *m, int *fd, int flags)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (n < 0)
		return -errno;
	if (n != sizeof(*m))
		return -EPIPE;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 0;
}

static bool op_send(struct fz_thread *t)
{
	struct fz_msg m = { .type = MSG_PASS };
	struct fz_fd e;
	int slot, ret;

	slot = fd_claim(t, FD_BUF, false, &e);
	if (slot < 0)
		return false;
	m.rdonly = e.rdonly;
	m.size = e.size;
	ret = msg_send(env.sock, &m, e.fd, MSG_DONTWAIT);
	/* A full queue or too many fds in flight only means the helper is behind. */
	fz_expect(t, "sendmsg of a dma-buf", ret,
		  RES_OK | RES_E(EAGAIN) | RES_E(ETOOMANYREFS) | RES_E(ENOBUFS));
	fd_release(slot);
	return true;
}

static bool op_recv(struct fz_thread *t)
{
	struct fz_msg m;
	int fd, ret;

	ret = msg_recv(env.sock, &m, &fd, MSG_DONTWAIT);
	if (ret == -EAGAIN)
		return false;
	if (!fz_expect(t, "recvmsg from the helper", ret, RES_OK))
		return true;
	if (m.type != MSG_REPLY || fd < 0 || !m.size) {
		FZ_FAIL(t, "helper message type %u fd %d size %llu", m.type, fd,
			(unsigned long long)m.size);
		if (fd >= 0)
			close(fd);
		return true;
	}
	fd_add(fd, FD_BUF, m.size, m.rdonly, 0, NULL);
	return true;
}

/*
 * The helper: another process with its own client.  It imports every
 * dma-buf it is passed, checks what INFO says of it against the sender's
 * word, maps and reads it, and frees it; it keeps some fds a while, and
 * sends buffers of its own back, already freed on its side.
 */
static void helper_main(int sock)
{
	uint64_t rng = env.seed ^ 0x4e1e9e2ULL;
	int dev = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC), held[8], nheld = 0, bad = 0;

	bad += !CHECK(dev >= 0, "helper: open: %s", strerror(errno));
	for (;;) {
		struct accmap_info info;
		struct fz_msg m;
		uint32_t id;
		int fd, ret;
		void *p;

		ret = msg_recv(sock, &m, &fd, 0);
		if (ret == -EINTR)
			continue;
		if (ret || m.type == MSG_QUIT) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (!CHECK(m.type == MSG_PASS && fd >= 0, "helper: message %u without an fd",
			   m.type)) {
			bad++;
			continue;
		}
		ret = am_from_fd(dev, fd, &id);
		bad += !CHECK(!ret, "seed %llu helper: FROM_FD: %s", (unsigned long long)env.seed,
			      strerror(-ret));
		if (!ret) {
			ret = am_info(dev, id, &info);
			bad += !CHECK(!ret && info.size == m.size &&
			      !!(info.state & ACCMAP_STATE_READONLY) == !!m.rdonly &&
			      (info.state & ACCMAP_STATE_ALLOCATED) && info.handle_refs >= 1,
			      "seed %llu helper: INFO of an imported id: %s size %llu (sent %llu) state %#x",
			      (unsigned long long)env.seed, strerror(-ret),
			      (unsigned long long)info.size, (unsigned long long)m.size,
			      info.state);
			bad += !CHECK(am_free(dev, id) == 0, "seed %llu helper: FREE",
				      (unsigned long long)env.seed);
		}
		p = mmap(NULL, env.page, PROT_READ, MAP_SHARED, fd, 0);
		bad += p == MAP_FAILED;
		if (CHECK(p != MAP_FAILED, "seed %llu helper: mmap of a passed dma-buf: %s",
			  (unsigned long long)env.seed, strerror(errno))) {
			(void)word_load(p);
			munmap(p, env.page);
		}
		if (m.rdonly)
			bad += !CHECK(mmap(NULL, env.page, PROT_READ | PROT_WRITE, MAP_SHARED,
					   fd, 0) == MAP_FAILED && errno == EACCES,
			      "seed %llu helper: writable mmap of a read-only dma-buf",
			      (unsigned long long)env.seed);
		if (nheld < 8 && splitmix(&rng) % 2)
			held[nheld++] = fd;
		else
			close(fd);
		if (nheld == 8 || splitmix(&rng) % 4 == 0)
			while (nheld)
				close(held[--nheld]);

		/* A buffer of our own back, held only by the fd in flight. */
		if (splitmix(&rng) % 4 == 0) {
			uint64_t size = (1 + splitmix(&rng) % 4) * env.page;
			bool rdonly = splitmix(&rng) % 2;
			struct fz_msg r = { .type = MSG_REPLY, .rdonly = rdonly, .size = size };

			if (am_create(dev, size, &id) == 0) {
				if (am_alloc(dev, id, 0, FZ_TAG_BASE) == 0) {
					fd = am_get_fd(dev, id, (rdonly ? O_RDONLY : O_RDWR) |
								O_CLOEXEC);
					if (fd >= 0) {
						ret = msg_send(sock, &r, fd, MSG_DONTWAIT);
						bad += !CHECK(!ret || ret == -EAGAIN ||
							      ret == -ETOOMANYREFS,
						      "helper: sendmsg: %s", strerror(-ret));
						close(fd);
					}
				}
				am_free(dev, id);
			}
		}
	}
	while (nheld)
		close(held[--nheld]);
	close(dev);
	close(sock);
	fflush(stdout);
	_exit(bad ? 1 : 0);
}

/* ---- fork: a child on the inherited client ---- */

/* What the child does; decided before fork() so that the child only makes system calls. */
struct fz_child_plan {
	int dev;
	uint32_t id;		/* an id of the client to look up, maybe stale */
	int buf_fd;		/* a dma-buf to map and sync, or -1 */
	uint64_t buf_size;
	bool buf_rdonly;
	void *map;		/* a live mapping of the parent thread, or NULL */
	bool drop_rawio;
	size_t page;
	/* A private buffer with a shadow, read through the inherited private client. */
	int own;
	uint32_t own_id;
	uint64_t own_off, own_len;
	const uint8_t *own_sh;	/* the shadow's bytes at own_off (the child's copy) */
	uint8_t *own_tmp;	/* own_len bytes to read into */
};

static void child_fail(struct fz_child_report *r, int step, int err, long detail)
{
	r->step = step;
	r->err = err;
	r->detail = detail;
	_exit(step);
}

/* Async-signal-safe only: the parent had other threads when it forked. */
static void child_main(const struct fz_child_plan *p, struct fz_child_report *rep)
{
	struct accmap_info info = { .id = p->id };
	struct accmap_create c = { .size = p->page };
	struct accmap_alloc a = { .heap_mask = ACCMAP_HEAP_MASK_SYSTEM };
	struct accmap_get_fd g = { .fd_flags = O_RDWR | O_CLOEXEC };
	struct accmap_free f = { 0 };
	uint64_t *w;
	int ret;

	ret = ioctl(p->dev, ACCMAP_IOC_INFO, &info) ? errno : 0;
	if (ret && ret != ENOENT)
		child_fail(rep, 1, ret, p->id);
	if (ioctl(p->dev, ACCMAP_IOC_CREATE, &c))
		child_fail(rep, 2, errno, 0);
	a.id = c.id;
	ret = ioctl(p->dev, ACCMAP_IOC_ALLOC, &a) ? errno : 0;
	/* Siblings in the parent may free any id of the client. */
	if (ret && ret != ENOENT)
		child_fail(rep, 3, ret, c.id);
	g.id = c.id;
	ret = ioctl(p->dev, ACCMAP_IOC_GET_FD, &g) ? errno : 0;
	if (ret && ret != ENOENT)
		child_fail(rep, 4, ret, c.id);
	if (!ret) {
		w = mmap(NULL, p->page, PROT_READ | PROT_WRITE, MAP_SHARED, g.fd, 0);
		if (w == MAP_FAILED)
			child_fail(rep, 5, errno, 0);
		word_store(w + 1, 0x1234);
		if (word_load(w + 1) != 0x1234)
			child_fail(rep, 6, 0, (long)word_load(w + 1));
		munmap(w, p->page);
		close(g.fd);
	}
	f.id = c.id;
	ret = ioctl(p->dev, ACCMAP_IOC_FREE, &f) ? errno : 0;
	if (ret && ret != ENOENT)
		child_fail(rep, 7, ret, c.id);
	if (p->map)
		(void)word_load(p->map);
	if (p->own_sh) {
		struct accmap_rw rw = { .addr = (uintptr_t)p->own_tmp, .offset = p->own_off,
					.elem_size = p->own_len, .count = 1, .id = p->own_id };

		if (ioctl(p->own, ACCMAP_IOC_READ, &rw))
			child_fail(rep, 15, errno, p->own_id);
		for (uint64_t i = 0; i < p->own_len; i++) {
			if (p->own_tmp[i] != p->own_sh[i])
				child_fail(rep, 16, 0, (long)(p->own_off + i));
		}
	}
	if (p->buf_fd >= 0) {
		struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ };
		void *m = mmap(NULL, p->page, PROT_READ, MAP_SHARED, p->buf_fd, 0);

		if (m == MAP_FAILED)
			child_fail(rep, 8, errno, 0);
		if (ioctl(p->buf_fd, DMA_BUF_IOCTL_SYNC, &s))
			child_fail(rep, 9, errno, 0);
		(void)word_load(m);
		s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
		if (ioctl(p->buf_fd, DMA_BUF_IOCTL_SYNC, &s))
			child_fail(rep, 10, errno, 0);
		munmap(m, p->page);
	}
	if (p->drop_rawio) {
		struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct data[2];
		struct accmap_replay_target_info q = { .index = 0 };
		struct accmap_replay_run r = { .nr_ops = 1, .session = 1, .done = 77,
					       .failed_op = 77, .reason = 77, .fault_as = 77 };

		if (syscall(SYS_capget, &hdr, data))
			child_fail(rep, 11, errno, 0);
		data[CAP_SYS_RAWIO / 32].effective &= ~(1U << (CAP_SYS_RAWIO % 32));
		if (syscall(SYS_capset, &hdr, data))
			child_fail(rep, 12, errno, 0);
		ret = ioctl(p->dev, ACCMAP_IOC_REPLAY_QUERY, &q) ? errno : 0;
		if (ret != EPERM)
			child_fail(rep, 13, ret, 0);
		/* Every output is written, EPERM included. */
		ret = ioctl(p->dev, ACCMAP_IOC_REPLAY_RUN, &r) ? errno : 0;
		if (ret != EPERM || r.done || r.failed_op != NO_INDEX || r.reason ||
		    r.fault_as != NO_INDEX)
			child_fail(rep, 14, ret, (long)r.failed_op);
	}
	_exit(0);
}

static bool op_fork(struct fz_thread *t)
{
	struct fz_child_plan p = { .buf_fd = -1, .page = env.page };
	struct fz_fd dev, buf;
	int dslot, bslot = -1, status;
	struct fz_idk k;
	struct fz_cl cl;
	pid_t pid;

	dslot = fd_claim(t, FD_DEV, false, &dev);
	if (dslot < 0)
		return false;
	cl = (struct fz_cl){ .fd = dev.fd, .slot = -1, .c = dev.client };
	pick_id(t, &cl, &k, false);
	p.dev = dev.fd;
	p.id = k.id;
	if (one_in(t, 2))
		bslot = fd_claim(t, FD_BUF, false, &buf);
	if (bslot >= 0) {
		p.buf_fd = buf.fd;
		p.buf_size = buf.size;
		p.buf_rdonly = buf.rdonly;
	}
	if (t->nmaps)
		p.map = t->maps[below(t, t->nmaps)].addr;
	p.drop_rawio = one_in(t, 4);
	/* The parent's private buffers, as the child sees them through the inherited file. */
	if (t->own >= 0 && t->nh) {
		struct fz_handle *h = &t->h[below(t, t->nh)];

		if (sh_get(h)) {
			p.own = t->own;
			p.own_id = h->id;
			p.own_len = range(t, 1, h->size < env.page ? h->size : env.page);
			p.own_off = below(t, h->size - p.own_len + 1);
			p.own_sh = h->sh + p.own_off;
			p.own_tmp = t->tmp;
			t->sh_checks++;
		}
	}
	memset(t->report, 0, sizeof(*t->report));
	pthread_rwlock_wrlock(&fz_memfd_lock);
	pid = fork();
	if (pid == 0)
		child_main(&p, t->report);
	pthread_rwlock_unlock(&fz_memfd_lock);
	if (pid < 0) {
		fz_expect(t, "fork", -errno, RES_E(EAGAIN));
	} else {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			FZ_FAIL(t, "forked child: status %#x, step %d, %s, detail %ld", status,
				t->report->step, ename(t->report->err), t->report->detail);
	}
	if (bslot >= 0)
		fd_release(bslot);
	fd_release(dslot);
	return true;
}

/* ---- closing and reopening clients ---- */

static void own_close(struct fz_thread *t)
{
	if (t->own >= 0)
		close(t->own);
	t->own = -1;
	for (unsigned int i = 0; i < t->nh; i++)
		free(t->h[i].sh);
	t->nh = 0;
	t->nstale = 0;
	t->ns = 0;
	t->max_id = 0;
	t->stale_sess = 0;
}

static bool own_open(struct fz_thread *t)
{
	t->own = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (t->own < 0)
		FZ_FAIL(t, "open %s: %s", ACCMAP_DEV_PATH, strerror(errno));
	return t->own >= 0;
}

/* Closes a client with whatever it holds: handles, sessions, exported and mapped buffers. */
static bool op_reopen(struct fz_thread *t)
{
	struct fz_fd e;
	int slot;

	if (one_in(t, 2)) {
		own_close(t);
		own_open(t);
		return true;
	}
	slot = fd_claim(t, FD_DEV, false, &e);
	if (slot >= 0) {
		fd_retire(slot);
		fd_release(slot);
	}
	while (fd_count(FD_DEV) < FZ_DEVS && !fz_stopped())
		dev_add(t);
	return true;
}

/* fdinfo of the private client counts the ids the model holds. */
static bool op_fdinfo(struct fz_thread *t)
{
	char val[64];
	int ret;

	if (t->own < 0)
		return false;
	ret = fdinfo_value(t->own, "accmap-handles", val, sizeof(val));
	if (!fz_expect(t, "fdinfo accmap-handles", ret, RES_OK))
		return true;
	if (strtoul(val, NULL, 10) != t->nh)
		FZ_FAIL(t, "fdinfo says %s handles, the model %u", val, t->nh);
	return true;
}

/*
 * A big buffer of the private client, start to end: 64 KiB to 16 MiB from
 * the system heap or a carveout, its last page copied and mapped; or one
 * as large as the RAM, which only a carveout could be asked for.
 */
static bool op_big(struct fz_thread *t)
{
	uint64_t size = one_in(t, 8) ? env.ram : range(t, 16, FZ_BIG_MAX / env.page) * env.page;
	uint32_t mask = one_in(t, 2) ? ACCMAP_HEAP_MASK_SYSTEM : env.alloc_heaps;
	uint32_t flags = one_in(t, 2) ? 0 : ACCMAP_ALLOC_WRITECOMBINE;
	struct accmap_alloc a = { 0 };
	uint64_t v = rnd(t), got;
	__uint128_t allowed;
	uint32_t id;
	int ret, fd;

	if (t->own < 0)
		return false;
	if (size > FZ_BIG_MAX)
		mask &= ~ACCMAP_HEAP_MASK_SYSTEM;
	ret = am_create(t->own, size, &id);
	if (!fz_expect(t, "CREATE of a big buffer", ret, RES_OK) || ret)
		return true;
	a.id = id;
	a.heap_mask = mask;
	a.flags = flags;
	ret = ioctl(t->own, ACCMAP_IOC_ALLOC, &a) ? -errno : 0;
	allowed = RES_OK | RES_E(ENOMEM);
	if (!mask || (!flags && !(mask & ACCMAP_HEAP_MASK_SYSTEM)))
		allowed |= RES_E(EINVAL);
	if (!(mask & env.alloc_heaps))
		allowed |= RES_E(ENODEV);
	fz_expect(t, "ALLOC of a big buffer", ret, allowed);
	if (!ret) {
		ret = am_write(t->own, id, size - sizeof(v), &v, sizeof(v));
		fz_expect(t, "WRITE at the end of a big buffer", ret, RES_OK);
		fd = am_get_fd(t->own, id, O_RDWR | O_CLOEXEC);
		if (fz_expect(t, "GET_FD of a big buffer", fd < 0 ? fd : 0,
			      RES_OK | RES_E(EMFILE)) && fd >= 0) {
			uint8_t *p = mmap(NULL, env.page, PROT_READ, MAP_SHARED, fd,
					  (off_t)(size - env.page));

			if (fz_expect(t, "mmap of the last page of a big buffer",
				      p == MAP_FAILED ? -errno : 0, RES_OK) &&
			    p != MAP_FAILED) {
				if (touch((uint64_t *)(p + env.page - sizeof(v)), false, 0,
					  &got) || got != v)
					FZ_FAIL(t, "big buffer's end, mapped: %#llx, not %#llx",
						(unsigned long long)got, (unsigned long long)v);
				munmap(p, env.page);
			}
			close(fd);
		}
	}
	fz_expect(t, "FREE of a big buffer", am_free(t->own, id), RES_OK);
	return true;
}

/* ---- checkpoint: STATE, DMABUF, restores, and all of it without the right ---- */

/*
 * ACCMAP_IOC_CHECKPOINT.  STATE is checked against the private client's
 * model exactly (its ids, sessions and next id) and, for a shared client
 * that other threads change meanwhile (CREATE, FREE, SVM SET_ATTR, munmap
 * of the mirrored pages), against what must hold of any snapshot: the
 * sizes add up, ids ascend below the next id and keep what the records
 * of that client say of them, every SVM session's attribute ranges tile
 * its range.  A restore is done whole into fresh files, from the private
 * client's state: BEGIN, CLIENT, BUFFER (ids and dma-bufs), SESSION,
 * RESTORE_OFFSET and mmap() through the restore's right, FINISH of this
 * process and of one that did not join, then close.
 */

/* Records one restore may move, at most. */
#define FZ_CK_RECS		8

/*
 * ACCMAP_IOC_CHECKPOINT through fz_ioctl() (@envelope: one call in ten in a
 * mutated envelope) or as given.  @allocates: whether the op allocates,
 * so that injection may fail it with ENOMEM (inject_allowed()).
 */
static int ck_call(struct fz_thread *t, int fd, struct accmap_ckpt *a, bool allocates,
		   bool envelope, __uint128_t allowed, const char *what, bool *intact)
{
	int ret;

	t->ck_noalloc = !allocates;
	if (envelope) {
		ret = fz_ioctl(t, fd, ACCMAP_IOC_CHECKPOINT, a, allowed, what, intact);
	} else {
		*intact = true;
		t->nowb = false;
		t->inj = false;
		t->inj_wb = false;
		ret = inject_ioctl(t, fd, ACCMAP_IOC_CHECKPOINT, a);
		fz_expect(t, what, ret, inject_allowed(t, ACCMAP_IOC_CHECKPOINT, allowed));
		inject_result(t, allowed, ret, intact);
	}
	t->ck_noalloc = false;
	return ret;
}

static bool ck_str_ok(const char *s, size_t len)
{
	return memchr(s, '\0', len);
}

/* What any handle record must be, in any client of this process; @next_id 0: no id. */
static bool ck_handle_ok(struct fz_thread *t, const struct accmap_ckpt_handle *r,
			 uint32_t next_id)
{
	const char *why = NULL;

	if (!r->serial || !r->size || r->size % env.page)
		why = "serial or size";
	else if (r->pad || r->pad2 || r->state & ~ACCMAP_CKPT_H_VALID)
		why = "padding or state";
	else if (!ck_str_ok(r->heap_name, sizeof(r->heap_name)) ||
		 !ck_str_ok(r->label, sizeof(r->label)))
		why = "unterminated name";
	else if (next_id && (!r->id || r->id >= next_id))
		why = "id 0 or not below the next id";
	else if (r->map_offset % env.page)
		why = "map_offset";
	else if (r->kind == ACCMAP_CKPT_KIND_EMPTY)
		why = r->heap != ACCMAP_HEAP_NONE || r->flags || r->va || r->origin_pid ||
		      r->heap_name[0] || r->state & ~ACCMAP_CKPT_H_ID_RDONLY ? "empty" : NULL;
	else if (r->kind == ACCMAP_CKPT_KIND_ALLOC)
		why = r->heap >= ACCMAP_HEAP_MAX || !(env.heaps & BIT(r->heap)) ||
		      !r->heap_name[0] || r->va || r->origin_pid ||
		      r->state & ACCMAP_CKPT_H_FROM_VA_WRITE ? "alloc" : NULL;
	else if (r->kind == ACCMAP_CKPT_KIND_FROM_VA)
		why = r->heap != ACCMAP_HEAP_NONE || r->flags || !r->va || r->va % env.page ||
		      (r->origin_pid != (uint32_t)getpid() &&
		       r->origin_pid != (uint32_t)env.helper) ? "from_va" : NULL;
	else
		why = "kind";
	if (why)
		FZ_FAIL(t,
			"STATE: handle record id %u serial %llu size %llu kind %u heap %u state %#x va %#llx pid %u: %s",
			r->id, (unsigned long long)r->serial,
			(unsigned long long)r->size, r->kind, r->heap, r->state,
			(unsigned long long)r->va, r->origin_pid, why);
	return !why;
}

/*
 * Whether a record's id may not write: a read-only id, or a read-only
 * FROM_VA buffer (which the model counts the same).
 */
static bool ck_rdonly(const struct accmap_ckpt_handle *r)
{
	return r->state & ACCMAP_CKPT_H_ID_RDONLY ||
	       (r->kind == ACCMAP_CKPT_KIND_FROM_VA && !(r->state & ACCMAP_CKPT_H_FROM_VA_WRITE));
}

/* A record of the private client against the model. */
static bool ck_handle_model(struct fz_thread *t, const struct accmap_ckpt_handle *r)
{
	struct fz_handle *h = own_find(t, r->id);
	bool kind_ok;

	if (!h) {
		FZ_FAIL(t, "STATE: id %u, which the private client does not hold", r->id);
		return false;
	}
	if (h->fromva)
		kind_ok = r->kind == ACCMAP_CKPT_KIND_FROM_VA;
	else if (h->alloc)
		kind_ok = r->kind != ACCMAP_CKPT_KIND_EMPTY;
	else
		kind_ok = r->kind == ACCMAP_CKPT_KIND_EMPTY;
	if (!kind_ok || (h->size && r->size != h->size) ||
	    h->readonly != ck_rdonly(r)) {
		FZ_FAIL(t,
			"STATE: id %u kind %u size %llu state %#x; model: alloc %d from_va %d size %llu readonly %d",
			r->id, r->kind, (unsigned long long)r->size,
			r->state, h->alloc, h->fromva, (unsigned long long)h->size, h->readonly);
		return false;
	}
	return true;
}

/*
 * A record of a shared client against that client's records as they were
 * before the STATE call (@before): ids are never reused, so a record of
 * the id is of this buffer, and memory it had then it still has.
 */
static bool ck_handle_rec(struct fz_thread *t, const struct fz_rec *before,
			  const struct accmap_ckpt_handle *r)
{
	for (unsigned int i = 0; i < FZ_REC_MAX; i++) {
		const struct fz_rec *e = &before[i];

		if (!e->used || e->id != r->id)
			continue;
		if ((e->size && e->size != r->size) || e->readonly != ck_rdonly(r) ||
		    (e->alloc && r->kind == ACCMAP_CKPT_KIND_EMPTY)) {
			FZ_FAIL(t,
				"STATE of a shared client: id %u size %llu state %#x kind %u; recorded: size %llu readonly %d alloc %d",
				r->id,
				(unsigned long long)r->size, r->state, r->kind,
				(unsigned long long)e->size, e->readonly, e->alloc);
			return false;
		}
		break;
	}
	return true;
}

/* The attribute ranges of an SVM session tile its range, merged. */
static bool ck_attrs_ok(struct fz_thread *t, const struct accmap_ckpt_session *s,
			const struct accmap_ckpt_svm_attr *a)
{
	uint64_t at = s->svm_start;

	for (uint32_t i = 0; i < s->nr_attrs; i++) {
		const struct accmap_ckpt_svm_attr *r = &a[i], *prev = i ? &a[i - 1] : NULL;

		if (r->start != at || !r->size || r->size % env.page ||
		    r->size > s->svm_start + s->svm_size - at ||
		    r->attrs & ~ACCMAP_SVM_ATTR_VALID || r->granule < ACCMAP_SVM_GRANULE_MIN ||
		    r->granule > ACCMAP_SVM_GRANULE_MAX || r->location != ACCMAP_SVM_LOC_SYSTEM ||
		    r->pad || (prev && prev->attrs == r->attrs && prev->granule == r->granule &&
				prev->location == r->location)) {
			FZ_FAIL(t,
				"STATE: session %u range %u of %u: [%#llx, +%#llx) attrs %#x granule %u location %u; expected at %#llx in [%#llx, +%#llx)",
				s->id, i, s->nr_attrs, (unsigned long long)r->start,
				(unsigned long long)r->size, r->attrs, r->granule, r->location,
				(unsigned long long)at, (unsigned long long)s->svm_start,
				(unsigned long long)s->svm_size);
			return false;
		}
		at += r->size;
	}
	if (at != s->svm_start + s->svm_size) {
		FZ_FAIL(t, "STATE: session %u: %u ranges end at %#llx, the range at %#llx", s->id,
			s->nr_attrs, (unsigned long long)at,
			(unsigned long long)(s->svm_start + s->svm_size));
		return false;
	}
	return true;
}

/* Whether the records (ascending ids, checked already) hold @id. */
static bool ck_has_id(const struct accmap_ckpt_handle *recs, uint32_t n, uint32_t id)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (recs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && recs[lo].id == id;
}

/*
 * Checks a state of @size bytes at @buf, of @cl's client; the private
 * client's exactly.  Returns whether it holds together.
 */
static bool ck_state_check(struct fz_thread *t, struct fz_cl *cl, const struct fz_rec *before,
			   const uint8_t *buf, uint64_t size)
{
	const struct accmap_ckpt_client *hd = (const void *)buf;
	const struct accmap_ckpt_handle *recs = (const void *)(hd + 1);
	const uint8_t *p, *end = buf + size;
	uint32_t prev = 0;

	if (size < sizeof(*hd) || hd->magic != ACCMAP_CKPT_MAGIC ||
	    hd->version != ACCMAP_CKPT_VERSION || hd->size != size || hd->pad ||
	    hd->pid != (uint32_t)getpid() || !hd->next_id ||
	    hd->nr_handles > (size - sizeof(*hd)) / sizeof(*recs) ||
	    hd->nr_sessions > FZ_SESS_MAX) {
		FZ_FAIL(t,
			"STATE head: magic %#x version %u size %llu of %llu, %u handles, %u sessions, next id %u, pid %u",
			hd->magic, hd->version,
			(unsigned long long)hd->size, (unsigned long long)size, hd->nr_handles,
			hd->nr_sessions, hd->next_id, hd->pid);
		return false;
	}
	if (cl->priv && (hd->nr_handles != t->nh || hd->nr_sessions != t->ns ||
			 (t->max_id && hd->next_id <= t->max_id))) {
		FZ_FAIL(t,
			"STATE of the private client: %u handles, %u sessions, next id %u; model: %u, %u, highest id %u",
			hd->nr_handles, hd->nr_sessions,
			hd->next_id, t->nh, t->ns, t->max_id);
		return false;
	}
	for (uint32_t i = 0; i < hd->nr_handles; i++) {
		if (!ck_handle_ok(t, &recs[i], hd->next_id))
			return false;
		if (recs[i].id <= prev) {
			FZ_FAIL(t, "STATE: id %u after id %u", recs[i].id, prev);
			return false;
		}
		prev = recs[i].id;
		if (cl->priv ? !ck_handle_model(t, &recs[i]) : !ck_handle_rec(t, before, &recs[i]))
			return false;
	}
	p = (const uint8_t *)(recs + hd->nr_handles);
	prev = 0;
	for (uint32_t i = 0; i < hd->nr_sessions; i++) {
		struct accmap_ckpt_session s;
		const struct accmap_replay_map *maps;
		uint64_t room;
		bool svm;

		if ((size_t)(end - p) < sizeof(s)) {
			FZ_FAIL(t, "STATE: session %u of %u past the end", i, hd->nr_sessions);
			return false;
		}
		memcpy(&s, p, sizeof(s));
		svm = s.flags == ACCMAP_REPLAY_SETUP_SVM;
		room = sizeof(s) + (uint64_t)s.nr_maps * sizeof(*maps) +
		       (uint64_t)s.nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
		if (s.id <= prev || s.id > FZ_SESS_MAX || s.target || s.nr_maps > FZ_RMAPS_MAX ||
		    s.nr_attrs > ACCMAP_SVM_ATTR_RANGES_MAX || room > (uint64_t)(end - p) ||
		    (s.flags && !svm) || s.format >= ACCMAP_PGT_COUNT || s.as >= SIM_AS_COUNT ||
		    (svm ? !s.nr_attrs || s.svm_start != (uintptr_t)env.svm ||
			   s.svm_size != env.svm_len || cl->priv :
			   s.nr_attrs || !s.nr_maps || s.svm_start || s.svm_size)) {
			FZ_FAIL(t,
				"STATE: session %u (after %u) target %u format %u as %u flags %#x maps %u attrs %u svm [%#llx, +%#llx), %zu bytes left",
				s.id, prev,
				s.target, s.format, s.as, s.flags, s.nr_maps, s.nr_attrs,
				(unsigned long long)s.svm_start, (unsigned long long)s.svm_size,
				(size_t)(end - p));
			return false;
		}
		prev = s.id;
		if (cl->priv) {
			struct fz_sess *m = sess_find(t, s.id);

			if (!m || m->format != s.format || m->as != s.as) {
				FZ_FAIL(t, "STATE: session %u format %u as %u; model: %s", s.id,
					s.format, s.as, m ? "other format or as" : "none");
				return false;
			}
		}
		maps = (const void *)(p + sizeof(s));
		for (uint32_t j = 0; j < s.nr_maps; j++) {
			uint32_t id = maps[j].id;

			/* Ids of this snapshot: a map names one of its own handle records. */
			if (!id || id >= hd->next_id || !ck_has_id(recs, hd->nr_handles, id) ||
			    (cl->priv && !own_find(t, id))) {
				FZ_FAIL(t, "STATE: session %u map %u names id %u (next id %u)",
					s.id, j, id, hd->next_id);
				return false;
			}
		}
		if (svm) {
			if (!ck_attrs_ok(t, &s, (const void *)(maps + s.nr_maps)))
				return false;
			t->ck_svm_states++;
			if (s.nr_attrs > t->ck_svm_ranges)
				t->ck_svm_ranges = s.nr_attrs;
		}
		p += room;
	}
	if (p != end) {
		FZ_FAIL(t, "STATE: records end %zu bytes before its size %llu", (size_t)(end - p),
			(unsigned long long)size);
		return false;
	}
	return true;
}

/*
 * STATE of @cl's client into @buf (@room bytes), with the oracle: ENOSPC
 * when the room cannot hold what the model knows is there, ENOENT (a
 * session maps a buffer the client lost its ids for) and EBUSY (a run) as
 * the client allows.  Sets *@size to the size reported; returns the
 * result, after checking a state that came back.
 */
static int ck_state(struct fz_thread *t, struct fz_cl *cl, uint8_t *buf, uint64_t room,
		    bool mutate, uint64_t *size)
{
	uint64_t least = sizeof(struct accmap_ckpt_client);
	struct fz_rec before[FZ_REC_MAX];
	struct accmap_ckpt a;
	struct fz_exp x;
	bool intact;
	int ret;

	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_STATE;
	a.data = (uintptr_t)buf;
	a.size = room;
	a.bad_kind = GARBAGE_U32;
	a.bad_id = GARBAGE_U32;
	exp_init(&x);
	if (cl->priv)
		least += t->nh * sizeof(struct accmap_ckpt_handle) +
			 t->ns * (sizeof(struct accmap_ckpt_session) +
				  sizeof(struct accmap_replay_map));
	switch (mutate ? below(t, 16) : 15) {
	case 0:
		a.size = below(t, least);
		break;
	case 1:		/* a field STATE does not use */
		switch (below(t, 5)) {
		case 0:
			a.flags = (uint32_t)range(t, 1, UINT32_MAX);
			break;
		case 1:
			a.token = range(t, 1, UINT64_MAX);
			break;
		case 2:
			a.contents = range(t, 1, UINT64_MAX);
			break;
		case 3:
			a.fd = (int32_t)range(t, 1, 1000);
			break;
		default:
			a.pid = (uint32_t)getpid();
			break;
		}
		fault(&x, EINVAL, YES);
		break;
	case 2:
		a.pad = range(t, 1, UINT64_MAX);
		fault(&x, EINVAL, YES);
		break;
	case 3:		/* room enough, nowhere to write it */
		a.data = one_in(t, 2) ? 0 : (uintptr_t)(t->ubuf + (U_RW_PAGES + 1) * env.page);
		a.size = UINT64_MAX;
		fault(&x, EFAULT, MAYBE);
		break;
	case 4:
		a.op = one_in(t, 2) ? 0 :
		       (uint32_t)range(t, ACCMAP_CKPT_OP_RESTORE_OFFSET + 1, UINT32_MAX);
		fault(&x, EINVAL, YES);
		break;
	default:
		break;
	}
	if (!x.definite) {
		/* What the client's state may refuse, or need room for. */
		fault(&x, ENOSPC, a.size < least ? YES : MAYBE);
		if (cl->priv) {
			fault(&x, ENOENT, t->ns ? MAYBE : NO);
		} else {
			fault(&x, ENOENT, MAYBE);
			fault(&x, EBUSY, MAYBE);
		}
		if (a.data != (uintptr_t)buf && x.may & RES_E(EFAULT))
			x.definite = true;	/* a state always has a head to write */
	}
	room = a.size;
	if (!cl->priv) {
		pthread_mutex_lock(&cl->c->lock);
		memcpy(before, cl->c->rec, sizeof(before));
		pthread_mutex_unlock(&cl->c->lock);
	}
	ret = ck_call(t, cl->fd, &a, true, true, exp_allowed(&x), "CHECKPOINT STATE", &intact);
	*size = a.size;
	if (!intact)
		return ret;
	if (!ret) {
		if (a.bad_kind || a.bad_id)
			FZ_FAIL(t, "STATE succeeded with bad_kind %u bad_id %u", a.bad_kind,
				a.bad_id);
		else if (a.size > room)
			FZ_FAIL(t, "STATE wrote %llu bytes into %llu", (unsigned long long)a.size,
				(unsigned long long)room);
		else
			ck_state_check(t, cl, before, buf, a.size);
	} else if (ret == -ENOSPC) {
		if (a.size <= room || a.size < least || a.bad_kind)
			FZ_FAIL(t,
				"STATE: ENOSPC for %llu bytes, needs %llu (at least %llu), bad_kind %u",
				(unsigned long long)room, (unsigned long long)a.size,
				(unsigned long long)least, a.bad_kind);
	} else if (ret == -ENOENT || ret == -EBUSY) {
		if (a.bad_kind != ACCMAP_CKPT_BAD_SESSION_BUSY || !a.bad_id ||
		    a.bad_id > FZ_SESS_MAX || (cl->priv && !sess_find(t, a.bad_id)))
			FZ_FAIL(t, "STATE: %s with bad_kind %u bad_id %u", ename(-ret), a.bad_kind,
				a.bad_id);
	} else if (ret != -EINVAL && a.bad_kind) {
		/* EINVAL for padding comes back before the outputs are cleared. */
		FZ_FAIL(t, "STATE: %s with bad_kind %u", ename(-ret), a.bad_kind);
	}
	return ret;
}

static bool op_ckstate(struct fz_thread *t)
{
	uint64_t size;
	struct fz_cl cl;
	int ret;

	if (!cl_get(t, &cl))
		return false;
	ret = ck_state(t, &cl, t->ck, FZ_CK_ROOM, true, &size);
	/* Told the size: again with that room, which another thread may have outgrown. */
	if (ret == -ENOSPC && size <= FZ_CK_ROOM && !fz_stopped())
		ck_state(t, &cl, t->ck, size, false, &size);
	cl_put(&cl);
	return true;
}

/* DMABUF of a dma-buf of the table (accmap or foreign), of a device fd, of a bad fd. */
static bool op_ckdmabuf(struct fz_thread *t)
{
	struct accmap_ckpt_handle rec;
	struct fz_fd e = { .fd = -1 };
	struct accmap_ckpt a;
	struct fz_exp x;
	struct fz_cl cl;
	int slot = -1, ret;
	bool intact;

	if (!cl_get(t, &cl))
		return false;
	memset(&a, 0, sizeof(a));
	memset(&rec, GARBAGE_BYTE, sizeof(rec));
	a.op = ACCMAP_CKPT_OP_DMABUF;
	a.serial = GARBAGE_U64;
	a.dmabuf_size = GARBAGE_U64;
	a.dmabuf_mode = GARBAGE_U32;
	exp_init(&x);
	switch (below(t, 8)) {
	case 0:
		a.fd = one_in(t, 2) ? -1 : 100000;
		fault(&x, EBADF, YES);
		break;
	case 1:		/* not a dma-buf */
		a.fd = one_in(t, 2) ? env.null_fd : cl.fd;
		fault(&x, EINVAL, YES);
		break;
	default:
		slot = claim_buf_fd(t, &x, &e, &a.fd);
		break;
	}
	if (one_in(t, 2)) {
		a.data = (uintptr_t)&rec;
		a.size = sizeof(rec);
		switch (below(t, 12)) {
		case 0:
			a.size = below(t, sizeof(rec));
			x.may = RES_E(ENOSPC);	/* before the fd is looked at */
			x.definite = true;
			break;
		case 1:
			a.data = (uintptr_t)(t->ubuf + U_RW_PAGES * env.page);	/* read-only */
			if (!x.definite)
				fault(&x, EFAULT, YES);
			break;
		default:
			break;
		}
	}
	if (one_in(t, 16)) {
		a.flags = (uint32_t)range(t, 1, UINT32_MAX);
		x.may = RES_E(EINVAL);
		x.definite = true;
	}
	ret = ck_call(t, cl.fd, &a, false, true, exp_allowed(&x), "CHECKPOINT DMABUF", &intact);
	if (!ret && intact) {
		uint32_t mode = e.rdonly ? O_RDONLY : O_RDWR;

		if (!a.serial || a.dmabuf_size != e.size || a.dmabuf_mode != mode)
			FZ_FAIL(t,
				"DMABUF: serial %llu size %llu mode %u; the fd: size %llu mode %u",
				(unsigned long long)a.serial, (unsigned long long)a.dmabuf_size,
				a.dmabuf_mode, (unsigned long long)e.size, mode);
		else if (a.data == (uintptr_t)&rec &&
			 (rec.id || rec.serial != a.serial || rec.size != a.dmabuf_size ||
			  !ck_handle_ok(t, &rec, 0)))
			FZ_FAIL(t, "DMABUF record: id %u serial %llu size %llu", rec.id,
				(unsigned long long)rec.serial, (unsigned long long)rec.size);
	}
	if (slot >= 0)
		fd_release(slot);
	cl_put(&cl);
	return true;
}

/*
 * A record a restore moved, and what the restore made of its buffer: in
 * the first record of the serial (@p), as two ids of one buffer have one
 * serial and come back as one buffer.
 */
struct fz_ckbuf {
	const struct accmap_ckpt_handle *rec;
	struct fz_ckbuf *p;	/* the first record of the serial */
	bool id;		/* this record's id was added */
	bool idmaybe;		/* ... perhaps (a call failed by injection) */
	bool made;		/* the restore's table has it */
	bool writable;		/* a writable id or an FD_RDWR was given: may map writable */
	bool wmaybe;		/* ... perhaps (a call failed by injection) */
	uint64_t serial;	/* the new buffer's serial (DMABUF of an fd), 0: unknown */
	uint64_t word;		/* its first word, if known (@known) */
	bool known;
	/*
	 * A call that failed by injection may have made it before its
	 * failure (the id or dma-buf step comes after the making, and
	 * a failure there leaves the buffer in the restore's table):
	 * with these first words, @mixed if not all the same.
	 */
	bool maybe;
	bool mixed;
	uint64_t mword;
};

/*
 * A call with contents word @word made @P's buffer, or found it made
 * (surely, or perhaps if @sure is false: a call that failed by injection).
 */
static void ck_made(struct fz_ckbuf *P, bool alloc, uint64_t word, bool sure)
{
	if (P->made)
		return;
	if (!sure) {
		P->mixed |= P->maybe && P->mword != word;
		P->maybe = true;
		P->mword = word;
		return;
	}
	P->made = true;
	P->known = alloc && (!P->maybe || (!P->mixed && P->mword == word));
	P->word = word;
}

/* A dma-buf a restore made. */
struct fz_ckfd {
	int fd;
	uint64_t size;
	bool rdonly;
};

/*
 * RESTORE_BUFFER of @b's record into @fd's client: an id (surely if
 * @want_id), a dma-buf or both.  A new dma-buf goes to @fds (the caller adds them to the table
 * when the restore is done: no other thread writes them before).  *@unsure
 * is set when injection leaves what the call did unknown.
 */
static void ck_buffer(struct fz_thread *t, int fd, uint64_t token, struct fz_ckbuf *b,
		      bool want_id, struct fz_ckfd *fds, unsigned int *nfds, bool *unsure)
{
	const struct accmap_ckpt_handle *r = b->rec;
	struct fz_ckbuf *P = b->p;
	bool alloc = r->kind == ACCMAP_CKPT_KIND_ALLOC, mutated = false, intact, rw;
	bool nodev = false, exists = false, nodata = false;
	struct accmap_ckpt_handle bad;
	uint32_t fd_flag = 0;
	struct accmap_ckpt a;
	struct fz_exp x;
	uint64_t word;
	int ret, own;

	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_RESTORE_BUFFER;
	a.token = token;
	a.data = (uintptr_t)r;
	a.size = sizeof(*r);
	a.fd = 0;
	switch (below(t, 4)) {
	case 0:
		a.flags = ACCMAP_CKPT_ADD_ID;
		break;
	case 1:
		if (want_id) {
			a.flags = ACCMAP_CKPT_ADD_ID;
			break;
		}
		fd_flag = one_in(t, 2) ? ACCMAP_CKPT_FD_RDONLY : ACCMAP_CKPT_FD_RDWR;
		break;
	default:
		a.flags = ACCMAP_CKPT_ADD_ID;
		fd_flag = one_in(t, 2) ? ACCMAP_CKPT_FD_RDONLY : ACCMAP_CKPT_FD_RDWR;
		break;
	}
	a.flags |= fd_flag | (fd_flag && one_in(t, 2) ? ACCMAP_CKPT_FD_CLOEXEC : 0);
	if (alloc && r->size <= U_RW_PAGES * env.page && one_in(t, 2)) {
		a.contents = (uintptr_t)t->ubuf;
		word = word_load(t->ubuf);
	} else {
		word = 0;
	}
	exp_init(&x);
	switch (below(t, 24)) {
	case 0:
		a.flags = one_in(t, 2) ? 0 : ACCMAP_CKPT_FD_RDONLY | ACCMAP_CKPT_FD_RDWR;
		fault(&x, EINVAL, YES);
		mutated = true;
		break;
	case 1:
		a.size = sizeof(*r) + (one_in(t, 2) ? 8 : -8);
		fault(&x, EINVAL, YES);
		mutated = true;
		break;
	case 2:		/* a record that is not whole */
		bad = *r;
		switch (below(t, 4)) {
		case 0:
			bad.size = one_in(t, 2) ? 0 : bad.size + 1;
			break;
		case 1:
			bad.pad2 = 1;
			break;
		case 2:
			bad.kind = 3 + (uint32_t)below(t, 100);
			break;
		default:
			bad.state |= 1U << range(t, 4, 31);
			break;
		}
		a.data = (uintptr_t)&bad;
		fault(&x, EINVAL, YES);
		mutated = true;
		break;
	case 3:
		a.token ^= 1ULL << below(t, 64);
		fault(&x, ENOENT, YES);
		mutated = true;
		break;
	case 4:		/* the same serial as another buffer's size */
		if (P->made) {
			bad = *r;
			bad.size += env.page;
			a.data = (uintptr_t)&bad;
			fault(&x, EINVAL, YES);
			mutated = true;
		}
		break;
	default:
		break;
	}
	if (!mutated) {
		/* Made on first sight: from the heap of the same name. */
		if (!P->made && alloc) {
			nodev = !(env.alloc_heaps & BIT(r->heap));
			fault_if(&x, ENODEV, nodev);
			x.may |= RES_E(ENOMEM) | dma32_may(r->flags, BIT(r->heap));
		}
		if (a.flags & ACCMAP_CKPT_ADD_ID) {
			exists = b->id;
			fault(&x, EEXIST, b->id ? YES : b->idmaybe ? MAYBE : NO);
		}
		if (fd_flag && !x.definite) {
			nodata = !alloc;
			fault_if(&x, ENODATA, nodata);
			x.may |= RES_E(EMFILE) | RES_E(ENFILE);
		}
	}
	ret = ck_call(t, fd, &a, true, one_in(t, 3), exp_allowed(&x), "RESTORE_BUFFER", &intact);
	if (mutated)
		return;
	rw = (a.flags & ACCMAP_CKPT_ADD_ID && !(r->state & ACCMAP_CKPT_H_ID_RDONLY)) ||
	     fd_flag == ACCMAP_CKPT_FD_RDWR;
	if (t->inj || (ret == -EFAULT && !t->nowb && !intact)) {
		/*
		 * Failed by injection or before the call.  An injected
		 * failure may come after the making, and after the mapping
		 * right was given; an id stays only if the call did all
		 * and the result's copy out failed (EFAULT).
		 */
		if (t->inj) {
			*unsure = true;
			P->wmaybe = true;
			ck_made(P, alloc, word, false);
			b->idmaybe |= ret == -EFAULT && a.flags & ACCMAP_CKPT_ADD_ID;
		}
		return;
	}
	/*
	 * The call's own result: a failed copy out (a read-only argument)
	 * turns any of them into EFAULT, as the argument is copied back on
	 * failure too.  A fault the call certainly has failed it.
	 */
	own = ret;
	if (ret == -EFAULT && t->nowb)
		own = nodev ? -ENODEV : exists ? -EEXIST : nodata ? -ENODATA : 0;
	if (!own || own == -EEXIST || own == -ENODATA || own == -EMFILE || own == -ENFILE) {
		/* The buffer was found or made, and given its mapping right. */
		ck_made(P, alloc, word, true);
		P->writable |= rw;
	} else if (own == -ENOMEM) {
		/*
		 * Out of memory in the making leaves nothing; in the id or
		 * dma-buf step after it, the buffer stays made with its
		 * mapping right.  ENOMEM is an allowed result here, so an
		 * injected one does not mark the call as injected.
		 */
		ck_made(P, alloc, word, false);
		P->wmaybe |= rw;
	}
	/* An id stays when only the copy out failed; a dma-buf does not. */
	if (!own && ret == -EFAULT && a.flags & ACCMAP_CKPT_ADD_ID)
		b->id = true;
	if (ret)
		return;
	t->ck_steps[CKS_BUFFER]++;
	if (a.flags & ACCMAP_CKPT_ADD_ID) {
		struct accmap_info info = { .id = r->id };

		b->id = true;
		ret = ioctl(fd, ACCMAP_IOC_INFO, &info) ? -errno : 0;
		if (fz_expect(t, "INFO of a restored id", ret, RES_OK) &&
		    (info.size != r->size ||
		     !!(info.state & ACCMAP_STATE_ALLOCATED) != alloc))
			FZ_FAIL(t,
				"restored id %u: size %llu state %#x, the record: size %llu kind %u",
				r->id, (unsigned long long)info.size, info.state,
				(unsigned long long)r->size, r->kind);
	}
	if (fd_flag) {
		struct accmap_ckpt d = { .op = ACCMAP_CKPT_OP_DMABUF, .fd = a.fd };
		bool rdonly = fd_flag == ACCMAP_CKPT_FD_RDONLY;
		int fdfl = fcntl(a.fd, F_GETFD);

		t->ck_steps[CKS_FD]++;
		ret = ioctl(fd, ACCMAP_IOC_CHECKPOINT, &d) ? -errno : 0;
		if (fz_expect(t, "DMABUF of a restored dma-buf", ret, RES_OK) &&
		    (d.dmabuf_size != r->size || d.dmabuf_mode != (rdonly ? O_RDONLY : O_RDWR) ||
		     !!(fdfl & FD_CLOEXEC) != !!(a.flags & ACCMAP_CKPT_FD_CLOEXEC) ||
		     (P->serial && d.serial != P->serial) || d.serial == r->serial))
			FZ_FAIL(t,
				"restored dma-buf of serial %llu: serial %llu (before %llu), size %llu, mode %u, cloexec %d",
				(unsigned long long)r->serial,
				(unsigned long long)d.serial, (unsigned long long)P->serial,
				(unsigned long long)d.dmabuf_size, d.dmabuf_mode,
				!!(fdfl & FD_CLOEXEC));
		P->serial = d.serial;
		fds[*nfds] = (struct fz_ckfd){ .fd = a.fd, .size = r->size, .rdonly = rdonly };
		(*nfds)++;
	}
}

/*
 * Takes record @r into @bufs[@nb] if @want and not there yet; FROM_VA of
 * this thread's scratch only (another thread's may be unmapped before
 * FINISH pins it again).  Returns 1 if taken.
 */
static unsigned int ck_pick(struct fz_thread *t, struct fz_ckbuf *bufs, unsigned int nb,
			    const struct accmap_ckpt_handle *r, bool want)
{
	if (!want || nb >= FZ_CK_RECS)
		return 0;
	if (r->kind == ACCMAP_CKPT_KIND_FROM_VA &&
	    (r->va < (uintptr_t)t->scr || r->va + r->size >
	     (uintptr_t)t->scr + (FZ_SCR_PAGES + FZ_SCR_SHARED) * env.page))
		return 0;
	bufs[nb] = (struct fz_ckbuf){ .rec = r, .p = &bufs[nb] };
	for (unsigned int j = 0; j < nb; j++) {
		if (bufs[j].rec == r)
			return 0;
		if (bufs[j].rec->serial == r->serial && bufs[nb].p == &bufs[nb])
			bufs[nb].p = bufs[j].p;
	}
	return 1;
}

/* RESTORE_SESSION of a session record whose maps' ids the restore added. */
static bool ck_session(struct fz_thread *t, int fd, uint64_t token, const uint8_t *p,
		       size_t len, bool again, bool *unsure)
{
	struct accmap_ckpt a;
	struct fz_exp x;
	bool intact, mutated = false;
	int ret;

	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_RESTORE_SESSION;
	a.token = token;
	a.data = (uintptr_t)p;
	a.size = len;
	exp_init(&x);
	switch (below(t, 16)) {
	case 0:
		a.size = one_in(t, 2) ? len + sizeof(struct accmap_replay_map) : len - 1;
		fault(&x, EINVAL, YES);
		mutated = true;
		break;
	case 1:
		a.token ^= 1ULL << below(t, 64);
		fault(&x, ENOENT, YES);
		mutated = true;
		break;
	default:
		fault_if(&x, EEXIST, again);
		break;
	}
	ret = ck_call(t, fd, &a, true, one_in(t, 3), exp_allowed(&x), "RESTORE_SESSION",
		      &intact);
	if (mutated)
		return false;
	if (t->inj)
		*unsure = true;
	/* Queued, whether or not the result could be written back. */
	if (ret && !(ret == -EFAULT && t->nowb))
		return false;
	t->ck_steps[CKS_SESSION]++;
	return true;
}

/* mmap() of @b's buffer through @dev at @off: which access the restore's right gives. */
static void *ck_mmap(struct fz_thread *t, int dev, const struct fz_ckbuf *bufs, unsigned int nb,
		     const struct fz_ckbuf *b, uint64_t off, bool finished)
{
	bool write = one_in(t, 2), id = false, id_w = false;
	__uint128_t allowed;
	uint64_t got;
	void *p;

	/* The ids the client holds of the buffer: any record's of its serial. */
	for (unsigned int i = 0; i < nb; i++) {
		if (bufs[i].p != b || !bufs[i].id)
			continue;
		id = true;
		id_w |= !(bufs[i].rec->state & ACCMAP_CKPT_H_ID_RDONLY);
	}

	p = mmap(NULL, env.page, PROT_READ | (write ? PROT_WRITE : 0), MAP_SHARED, dev,
		 (off_t)off);
	if (finished)		/* only its ids give the right now */
		allowed = id && (!write || id_w) ? RES_OK : RES_E(EACCES);
	else if (!write || id_w || b->writable)
		allowed = RES_OK;
	else
		allowed = RES_E(EACCES);
	/* Ids or rights a call failed by injection may have given. */
	if (b->wmaybe)
		allowed |= RES_OK | RES_E(EACCES);
	if (!fz_expect(t, finished ? "mmap of a restored buffer after FINISH" :
		       "mmap of a restored buffer through RESTORE_OFFSET",
		       p == MAP_FAILED ? -errno : 0, allowed)) {
		FZ_FAIL(t, "the mapping: %s, id %d (read-only %d), writable right %d",
			write ? "writable" : "read-only", id, id && !id_w, b->writable);
		if (p != MAP_FAILED)
			munmap(p, env.page);
		return NULL;
	}
	if (p == MAP_FAILED)
		return NULL;
	t->ck_steps[CKS_MMAP]++;
	if (touch(p, false, 0, &got))
		FZ_FAIL(t, "reading a restored buffer's mapping faulted");
	else if (b->known && got != b->word)
		FZ_FAIL(t, "restored buffer serial %llu reads %#llx, its contents %#llx",
			(unsigned long long)b->rec->serial, (unsigned long long)got,
			(unsigned long long)b->word);
	return p;
}

/*
 * A session of the private client over one of its buffers, into the
 * model, so that restores have sessions to bring back (the random ones
 * mostly map ids freed since, which STATE refuses).
 */
static void ck_add_session(struct fz_thread *t)
{
	struct accmap_replay_map *m = t->rmaps;
	struct accmap_replay_setup a;
	struct fz_handle *h;
	int ret;

	if (!t->nh || t->ns >= FZ_SESS_KEEP)
		return;
	h = &t->h[below(t, t->nh)];
	if (!h->alloc || !h->size || h->size % GPU_PAGE)
		return;
	memset(m, 0, sizeof(*m));
	m->gpu_va = 1ULL << 32;
	m->length = h->size;
	m->id = h->id;
	m->flags = ACCMAP_REPLAY_MAP_READ | (h->readonly ? 0 : ACCMAP_REPLAY_MAP_WRITE);
	m->attr = (uint32_t)below(t, ACCMAP_REPLAY_ATTR_MAX + 1);
	memset(&a, 0, sizeof(a));
	a.maps = (uintptr_t)m;
	a.nr_maps = 1;
	a.target = env.sim;
	a.format = (uint32_t)below(t, ACCMAP_PGT_COUNT);
	a.as = (uint32_t)below(t, SIM_AS_COUNT);
	a.va_bits = ACCMAP_REPLAY_VA_BITS_MAX;
	ret = ioctl(t->own, ACCMAP_IOC_REPLAY_SETUP, &a) ? -errno : 0;
	if (!fz_expect(t, "REPLAY_SETUP of a session to restore", ret, RES_OK) || ret)
		return;
	sh_share(h);
	t->s[t->ns++] = (struct fz_sess){ .id = a.session, .format = a.format, .as = a.as,
					  .map = *m };
}

/*
 * After a FINISH that failed: the queued sessions' mappings that write
 * through an id the state says is read-only, and whether the state holds
 * a writable id of the same buffer.
 */
static void ck_finish_why(struct fz_thread *t, const struct accmap_ckpt_handle *recs,
			  uint32_t nr, const uint8_t *const *sess, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct accmap_ckpt_session s;
		const struct accmap_replay_map *m;

		memcpy(&s, sess[i], sizeof(s));
		m = (const void *)(sess[i] + sizeof(s));
		for (uint32_t j = 0; j < s.nr_maps; j++) {
			const struct accmap_ckpt_handle *r = NULL;
			uint32_t writable = 0;

			for (uint32_t k = 0; k < nr; k++) {
				if (recs[k].id == m[j].id)
					r = &recs[k];
			}
			if (!r || !(m[j].flags & ACCMAP_REPLAY_MAP_WRITE) || !ck_rdonly(r))
				continue;
			for (uint32_t k = 0; k < nr; k++) {
				if (recs[k].serial == r->serial && !ck_rdonly(&recs[k]))
					writable = recs[k].id;
			}
			FZ_FAIL(t,
				"STATE: session %u map %u writes through read-only id %u (serial %llu, kind %u, state %#x); writable id of that buffer in the state: %u",
				s.id, j, r->id, (unsigned long long)r->serial, r->kind, r->state,
				writable);
		}
	}
}

/* A whole restore of the private client's state into two fresh files. */
static bool op_ckrestore(struct fz_thread *t)
{
	struct fz_cl own = { .fd = t->own, .slot = -1, .priv = true };
	struct accmap_ckpt_client head;
	const struct accmap_ckpt_client *hd = (const void *)t->ck;
	const struct accmap_ckpt_handle *recs = (const void *)(hd + 1);
	struct fz_ckbuf bufs[FZ_CK_RECS];
	struct fz_ckfd fds[2 * FZ_CK_RECS];
	unsigned int nb = 0, nfds = 0, queued = 0, pins = 0;
	bool unsure = false;
	uint32_t queued_ids[FZ_SESS_KEEP];
	const uint8_t *queued_recs[FZ_SESS_KEEP];
	struct accmap_ckpt a;
	int beg = -1, dev = -1, ret;
	uint64_t size, token, off = 0;
	struct fz_ckbuf *mb = NULL;
	bool intact, have_state;
	struct fz_exp x;
	void *map = NULL;

	if (t->own < 0)
		return false;
	if (one_in(t, 2))
		ck_add_session(t);
	ret = ck_state(t, &own, t->ck, FZ_CK_ROOM, false, &size);
	have_state = !ret && size <= FZ_CK_ROOM && !fz_stopped();
	if (!have_state) {
		/* Nothing to restore but the head. */
		memset(&head, 0, sizeof(head));
		head.magic = ACCMAP_CKPT_MAGIC;
		head.version = ACCMAP_CKPT_VERSION;
		head.size = sizeof(head);
		head.next_id = (uint32_t)range(t, 1, 1000);
		head.pid = (uint32_t)getpid();
	} else {
		head = *hd;
	}
	beg = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);
	dev = open(ACCMAP_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (beg < 0 || dev < 0) {
		FZ_FAIL(t, "open %s: %s", ACCMAP_DEV_PATH, strerror(errno));
		goto out;
	}

	/* BEGIN, on a file of its own. */
	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_RESTORE_BEGIN;
	exp_init(&x);
	if (one_in(t, 16)) {
		a.size = range(t, 1, UINT64_MAX);
		fault(&x, EINVAL, YES);
	}
	ret = ck_call(t, beg, &a, true, one_in(t, 3), exp_allowed(&x), "RESTORE_BEGIN", &intact);
	if (ret || !intact)
		goto out;
	if (!a.token) {
		FZ_FAIL(t, "RESTORE_BEGIN: token 0");
		goto out;
	}
	token = a.token;
	t->ck_steps[CKS_BEGIN]++;
	if (one_in(t, 4)) {
		memset(&a, 0, sizeof(a));
		a.op = ACCMAP_CKPT_OP_RESTORE_BEGIN;
		ck_call(t, beg, &a, true, false, RES_E(EBUSY), "RESTORE_BEGIN again", &intact);
	}
	if (one_in(t, 4)) {
		memset(&a, 0, sizeof(a));
		a.op = ACCMAP_CKPT_OP_STATE;
		a.data = (uintptr_t)t->tmp;
		a.size = env.page;
		ret = ck_call(t, beg, &a, false, false, RES_E(EBUSY),
			      "STATE of a restore's beginner", &intact);
		if (ret == -EBUSY && intact && a.bad_kind != ACCMAP_CKPT_BAD_RESTORING)
			FZ_FAIL(t, "STATE of a restore's beginner: bad_kind %u", a.bad_kind);
	}

	/* CLIENT: the fresh file becomes the dumped client, and this process joins. */
	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_RESTORE_CLIENT;
	a.token = token;
	a.data = (uintptr_t)&head;
	a.size = sizeof(head);
	exp_init(&x);
	switch (below(t, 24)) {
	case 0: {
		struct accmap_ckpt_client bad = head;

		if (one_in(t, 2))
			bad.magic ^= 1U << below(t, 32);
		else
			bad.next_id = 0;
		a.data = (uintptr_t)&bad;
		ck_call(t, dev, &a, false, false, RES_E(EINVAL), "RESTORE_CLIENT of a bad head",
			&intact);
		a.data = (uintptr_t)&head;
		break;
	}
	case 1:
		a.token = token ^ (1ULL << below(t, 64));
		ck_call(t, dev, &a, false, false, RES_E(ENOENT), "RESTORE_CLIENT of no restore",
			&intact);
		a.token = token;
		break;
	case 2:		/* the beginner is no fresh client to restore */
		ck_call(t, beg, &a, true, false, RES_E(EBUSY), "RESTORE_CLIENT on the beginner",
			&intact);
		break;
	default:
		break;
	}
	ret = ck_call(t, dev, &a, true, one_in(t, 3), RES_OK, "RESTORE_CLIENT", &intact);
	if (ret || !intact)
		goto out;
	t->ck_steps[CKS_CLIENT]++;
	if (one_in(t, 4))
		ck_call(t, dev, &a, true, false, RES_E(EBUSY), "RESTORE_CLIENT again", &intact);

	/* BUFFER: some records, each once or twice (the same buffer again). */
	if (have_state && hd->nr_handles) {
		const struct accmap_ckpt_session *s1 = (const void *)(recs + hd->nr_handles);
		const struct accmap_replay_map *m1 = (const void *)(s1 + 1);
		unsigned int first = (unsigned int)below(t, hd->nr_handles);
		unsigned int nwant = 0;

		/* The first session's buffers first, with their ids, so that it can come back. */
		if (hd->nr_sessions && s1->nr_maps <= FZ_CK_RECS && !one_in(t, 4)) {
			for (uint32_t j = 0; j < s1->nr_maps; j++) {
				for (uint32_t i = 0; i < hd->nr_handles; i++)
					nb += ck_pick(t, bufs, nb, &recs[i],
						      recs[i].id == m1[j].id);
			}
			nwant = nb;
		}
		for (unsigned int i = 0; i < hd->nr_handles && nb < FZ_CK_RECS; i++)
			nb += ck_pick(t, bufs, nb, &recs[(first + i) % hd->nr_handles], true);
		for (unsigned int i = 0; i < nb && !fz_stopped(); i++) {
			ck_buffer(t, dev, token, &bufs[i], i < nwant, fds, &nfds, &unsure);
			if (one_in(t, 3))
				ck_buffer(t, dev, token, &bufs[i], false, fds, &nfds, &unsure);
		}
	}

	/* SESSION: those whose every map's id came back; FINISH makes them. */
	if (have_state && env.sim == 0) {
		const uint8_t *p = (const uint8_t *)(recs + hd->nr_handles);

		for (uint32_t i = 0; i < hd->nr_sessions && !fz_stopped(); i++) {
			struct accmap_ckpt_session s;
			const struct accmap_replay_map *maps;
			size_t len;
			bool all = true;

			memcpy(&s, p, sizeof(s));
			maps = (const void *)(p + sizeof(s));
			len = sizeof(s) + s.nr_maps * sizeof(*maps) +
			      s.nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
			for (uint32_t j = 0; j < s.nr_maps && all; j++) {
				bool found = false;

				for (unsigned int k = 0; k < nb; k++)
					found |= bufs[k].id && bufs[k].rec->id == maps[j].id &&
						 (bufs[k].rec->kind == ACCMAP_CKPT_KIND_ALLOC ||
						  (bufs[k].rec->kind == ACCMAP_CKPT_KIND_FROM_VA &&
						   bufs[k].rec->origin_pid == (uint32_t)getpid()));
				all = found;
			}
			if (all && queued < FZ_SESS_KEEP &&
			    ck_session(t, dev, token, p, len, false, &unsure)) {
				queued_recs[queued] = p;
				queued_ids[queued++] = s.id;
				if (one_in(t, 4))
					ck_session(t, dev, token, p, len, true, &unsure);
			}
			p += len;
		}
	}
	/* FINISH of this process pins the FROM_VA buffers of its memory. */
	for (unsigned int i = 0; i < nb; i++)
		pins += bufs[i].p == &bufs[i] && bufs[i].made &&
			bufs[i].rec->kind == ACCMAP_CKPT_KIND_FROM_VA &&
			bufs[i].rec->origin_pid == (uint32_t)getpid();

	/* RESTORE_OFFSET: the restore may map what it made, ids or not. */
	for (unsigned int i = 0; i < nb && !mb; i++) {
		if (bufs[i].p == &bufs[i] && bufs[i].made &&
		    bufs[i].rec->kind == ACCMAP_CKPT_KIND_ALLOC)
			mb = &bufs[i];
	}
	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_RESTORE_OFFSET;
	a.token = token;
	a.map_offset = GARBAGE_U64;
	exp_init(&x);
	if (mb && !one_in(t, 8)) {
		a.serial = mb->rec->serial;
	} else if (nb && bufs[0].p->made && bufs[0].rec->kind != ACCMAP_CKPT_KIND_ALLOC) {
		a.serial = bufs[0].rec->serial;
		fault(&x, EINVAL, YES);		/* no memory (yet) */
	} else {
		a.serial = one_in(t, 2) ? 0 : GARBAGE_U64;
		fault(&x, ENOENT, YES);
	}
	if (one_in(t, 16)) {
		ck_call(t, beg, &a, false, false, RES_E(EINVAL), "RESTORE_OFFSET on the beginner",
			&intact);
	}
	ret = ck_call(t, dev, &a, false, one_in(t, 3), exp_allowed(&x), "RESTORE_OFFSET", &intact);
	if (!ret && intact && !x.may) {
		if (!a.map_offset || a.map_offset % env.page || a.map_offset > INT64_MAX) {
			FZ_FAIL(t, "RESTORE_OFFSET: offset %#llx",
				(unsigned long long)a.map_offset);
			goto out;
		}
		t->ck_steps[CKS_OFFSET]++;
		off = a.map_offset;
		map = ck_mmap(t, dev, bufs, nb, mb, off, false);
	}

	/* FINISH: not from the client, not of a process that did not join; then of us. */
	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_RESTORE_FINISH;
	a.token = token;
	a.pid = (uint32_t)getpid();
	if (one_in(t, 4))
		ck_call(t, dev, &a, false, false, RES_E(EINVAL),
			"RESTORE_FINISH not by the beginner", &intact);
	if (one_in(t, 2)) {
		a.pid = (uint32_t)env.helper;
		ret = ck_call(t, beg, &a, false, one_in(t, 3), RES_E(EPERM),
			      "RESTORE_FINISH of a process that did not join", &intact);
		if (ret == -EPERM && intact) {
			t->ck_steps[CKS_FOREIGN_PID]++;
			if (a.done)
				FZ_FAIL(t, "RESTORE_FINISH of pid %u: EPERM, done %u", a.pid,
					a.done);
		}
		a.pid = (uint32_t)getpid();
	}
	if (one_in(t, 8)) {
		a.pid = one_in(t, 2) ? 0 : 0x3fffffff;
		ck_call(t, beg, &a, false, false, RES_E(a.pid ? ESRCH : EINVAL),
			"RESTORE_FINISH of no process", &intact);
		a.pid = (uint32_t)getpid();
	}
	/*
	 * FINISH pins FROM_VA buffers (long-term pins, as FROM_VA's, with
	 * its RLIMIT_MEMLOCK charge) and builds the queued sessions' tables
	 * (as REPLAY_SETUP does): either may run out of memory for real.
	 */
	a.done = GARBAGE_U32;
	ret = ck_call(t, beg, &a, true, one_in(t, 3),
		      RES_OK | (pins || queued ? RES_E(ENOMEM) : 0), "RESTORE_FINISH", &intact);
	if (ret && !t->inj && ret != -EFAULT && ret != -ENOMEM)
		ck_finish_why(t, recs, hd->nr_handles, queued_recs, queued);
	if (ret || !intact)
		goto out;
	t->ck_steps[CKS_FINISH]++;
	if (!unsure && a.done != pins + queued)
		FZ_FAIL(t, "RESTORE_FINISH: done %u, %u buffers to pin and %u sessions queued",
			a.done, pins, queued);
	/* The sessions were made, at their ids. */
	for (unsigned int i = 0; i < queued; i++)
		fz_expect(t, "REPLAY_DESTROY of a restored session",
			  destroy_raw(dev, queued_ids[i]),
			  unsure ? RES_OK | RES_E(ENOENT) : RES_OK);
	/* Nothing is left to do for this process; it is no longer being restored. */
	if (one_in(t, 4)) {
		a.done = GARBAGE_U32;
		ret = ck_call(t, beg, &a, false, false, RES_OK, "RESTORE_FINISH again", &intact);
		if (!ret && a.done)
			FZ_FAIL(t, "RESTORE_FINISH again: done %u", a.done);
	}
	if (mb) {
		void *again;

		memset(&a, 0, sizeof(a));
		a.op = ACCMAP_CKPT_OP_RESTORE_OFFSET;
		a.token = token;
		a.serial = mb->rec->serial;
		ck_call(t, dev, &a, false, false, RES_E(EINVAL), "RESTORE_OFFSET after FINISH",
			&intact);
		if (off) {
			again = ck_mmap(t, dev, bufs, nb, mb, off, true);
			if (again)
				munmap(again, env.page);
		}
	}
out:
	if (map) {
		uint64_t got;

		/* A mapping outlives the restore's right, and the restore. */
		if (touch(map, false, 0, &got))
			FZ_FAIL(t, "a restored buffer's mapping faulted after FINISH");
		if (beg >= 0)
			close(beg);
		beg = -1;
		if (touch(map, false, 0, &got))
			FZ_FAIL(t, "a restored buffer's mapping faulted after the restore");
		munmap(map, env.page);
	}
	if (beg >= 0)
		close(beg);
	if (dev >= 0)
		close(dev);
	/* The restore's dma-bufs outlive it: for other threads to use now. */
	for (unsigned int i = 0; i < nfds; i++)
		fd_add(fds[i].fd, FD_BUF, fds[i].size, fds[i].rdonly, 0, NULL);
	return true;
}

/* ---- SVM attributes of the shared clients, for STATE to race ---- */

/*
 * One SVM session per shared client, over env.svm: attributes set from
 * every thread, pages of the range replaced under it, while STATE copies
 * the ranges from another thread.
 */
static bool op_cksvm(struct fz_thread *t)
{
	size_t npages = env.svm_len / env.page, first, n;
	struct accmap_svm_op s;
	struct fz_exp x;
	struct fz_fd e;
	uint32_t sess;
	bool intact;
	int slot, ret;

	if (!env.svm)
		return false;
	if (one_in(t, 8)) {
		/* Munmap under the mirror: a fresh page replaces the old. */
		uint8_t *p = env.svm + below(t, npages) * env.page;

		if (one_in(t, 2)) {
			if (mmap(p, env.page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
				FZ_FAIL(t, "mmap MAP_FIXED in the SVM range: %s", strerror(errno));
		} else {
			madvise(p, env.page, MADV_DONTNEED);
		}
		word_store(p, rnd(t));
		return true;
	}
	slot = fd_claim(t, FD_DEV, false, &e);
	if (slot < 0)
		return false;
	pthread_mutex_lock(&e.client->lock);
	sess = e.client->svm_session;
	pthread_mutex_unlock(&e.client->lock);
	if (!sess) {
		struct accmap_replay_setup a;

		memset(&a, 0, sizeof(a));
		a.target = env.sim;
		a.format = ACCMAP_PGT_MALI_AARCH64_4K;
		a.as = (uint32_t)below(t, SIM_AS_COUNT);
		a.va_bits = ACCMAP_REPLAY_VA_BITS_MAX;
		a.flags = ACCMAP_REPLAY_SETUP_SVM;
		a.svm_start = (uintptr_t)env.svm;
		a.svm_size = env.svm_len;
		/* Sessions of the client may be at the limit. */
		ret = fz_ioctl(t, e.fd, ACCMAP_IOC_REPLAY_SETUP, &a,
			       RES_OK | RES_E(ENOSPC), "REPLAY_SETUP of an SVM session", &intact);
		if (!ret && intact) {
			pthread_mutex_lock(&e.client->lock);
			if (!e.client->svm_session) {
				e.client->svm_session = a.session;
				a.session = 0;
			}
			pthread_mutex_unlock(&e.client->lock);
			if (a.session)
				fz_expect(t, "REPLAY_DESTROY of a second SVM session",
					  destroy_raw(e.fd, a.session), RES_OK | RES_E(ENOENT));
		}
		fd_release(slot);
		return true;
	}
	memset(&s, 0, sizeof(s));
	s.session = sess;
	s.op = ACCMAP_SVM_OP_SET_ATTR;
	if (one_in(t, 8)) {
		first = 0;
		n = npages;
	} else {
		first = below(t, npages);
		n = range(t, 1, one_in(t, 4) ? npages - first : 1);
	}
	s.start = (uintptr_t)env.svm + first * env.page;
	s.size = n * env.page;
	s.attrs = (uint32_t)below(t, ACCMAP_SVM_ATTR_VALID + 1);
	s.granule = one_in(t, 2) ? 0 :
		    (uint32_t)range(t, ACCMAP_SVM_GRANULE_MIN, ACCMAP_SVM_GRANULE_MAX);
	s.location = ACCMAP_SVM_LOC_SYSTEM;
	exp_init(&x);
	/* Other threads destroy sessions of the shared clients, and make others at the id. */
	fault(&x, ENOENT, MAYBE);
	fault(&x, EOPNOTSUPP, MAYBE);
	fault(&x, ENOSPC, MAYBE);
	ret = fz_ioctl(t, e.fd, ACCMAP_IOC_SVM, &s, exp_allowed(&x), "SVM SET_ATTR", &intact);
	if (ret == -ENOENT || ret == -EOPNOTSUPP) {
		pthread_mutex_lock(&e.client->lock);
		if (e.client->svm_session == sess)
			e.client->svm_session = 0;
		pthread_mutex_unlock(&e.client->lock);
	}
	fd_release(slot);
	return true;
}

/* ---- checkpoint without CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN ---- */

static bool caps_effective(struct fz_thread *t, bool on)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	static const unsigned int caps[] = { CAP_SYS_ADMIN, CAP_CHECKPOINT_RESTORE };

	if (syscall(SYS_capget, &hdr, data)) {
		FZ_FAIL(t, "capget: %s", strerror(errno));
		return false;
	}
	for (unsigned int i = 0; i < TAP_ARRAY_SIZE(caps); i++) {
		uint32_t bit = 1U << (caps[i] % 32);

		if (on)
			data[caps[i] / 32].effective |= data[caps[i] / 32].permitted & bit;
		else
			data[caps[i] / 32].effective &= ~bit;
	}
	/* Only this thread's credentials change. */
	if (syscall(SYS_capset, &hdr, data)) {
		FZ_FAIL(t, "capset: %s", strerror(errno));
		return false;
	}
	return true;
}

/*
 * Every op, with plausible arguments, from this thread without the
 * capabilities: EPERM before anything else, the argument left as it was.
 */
static bool op_cknoperm(struct fz_thread *t)
{
	struct accmap_ckpt a, before;
	struct fz_fd e;
	struct fz_cl cl;
	int slot = -1, ret;
	bool intact;

	if (!cl_get(t, &cl))
		return false;
	memset(&a, 0, sizeof(a));
	a.op = (uint32_t)range(t, ACCMAP_CKPT_OP_STATE, ACCMAP_CKPT_OP_RESTORE_OFFSET);
	switch (a.op) {
	case ACCMAP_CKPT_OP_STATE:
		a.data = (uintptr_t)t->ck;
		a.size = FZ_CK_ROOM;
		break;
	case ACCMAP_CKPT_OP_DMABUF:
		slot = fd_claim(t, FD_BUF, false, &e);
		a.fd = slot >= 0 ? e.fd : -1;
		break;
	case ACCMAP_CKPT_OP_RESTORE_FINISH:
		a.pid = (uint32_t)getpid();
		fallthrough;
	default:
		a.token = rnd(t);
		a.serial = rnd(t);
		break;
	}
	a.bad_kind = GARBAGE_U32;
	a.bad_id = GARBAGE_U32;
	a.done = GARBAGE_U32;
	before = a;
	if (caps_effective(t, false)) {
		ret = ck_call(t, cl.fd, &a, false, true, RES_E(EPERM),
			      "CHECKPOINT without CAP_CHECKPOINT_RESTORE", &intact);
		if (caps_effective(t, true) && ret == -EPERM && intact &&
		    memcmp(&a, &before, sizeof(a)))
			FZ_FAIL(t, "CHECKPOINT op %u: EPERM, the argument changed", a.op);
	}
	if (slot >= 0)
		fd_release(slot);
	cl_put(&cl);
	return true;
}

/* ---- compute jobs whose results are checked ---- */

/*
 * A job of the model's own compute type on the private client, its
 * inputs from the thread's generator, its output compared with what the
 * CPU computes for them (simdrv_reference()): over buffers of the private
 * client (OP_JOB), or over the thread's own anonymous memory in an SVM
 * session (OP_SVMJOB).  The job's session lives for the op only.
 *
 * REPLAY_RUN returns when its list ends, but the model runs a chain on a
 * worker of its own: a list that ends with the chain's START returns
 * while the job may still run.  So one run submits the job (simdrv's
 * list up to START), the thread then races it, and a second run waits
 * for the done interrupt (the list's last two ops).  The races leave the
 * result right: FREE of a private buffer the job does not use, or of the
 * id of its input buffer (the session keeps the memory); munmap (by a
 * PROT_NONE mapping in the page's place: job_unmap()), a fresh mapping
 * or MADV_DONTNEED of a page of the SVM range the job does not use;
 * SVM SET_ATTR of such a page, or of the job's own pages with
 * attributes that leave it the access it needs.  One race may fail the
 * job: a page of its inputs unmapped (OP_SVMJOB).  Then either the job
 * read that page first and is right, or the wait ends with EIO,
 * ACCMAP_REPLAY_MMU_FAULT, a read translation fault inside the page in
 * the session's address space, and neither C nor the job's status
 * written (the model reads A and B whole before it writes C).
 *
 * Under injection the new calls are held to their documented rules,
 * rather than the model adopting what the kernel says: a SETUP that
 * failed leaves no session behind (the private client's STATE holds the
 * model's sessions and no other); a RUN that failed with ENOMEM ran
 * nothing, one that failed with EFAULT nothing or all of its list (the
 * model's power and job slot registers say which), and a job its
 * submission never started wrote nothing; a wait that failed with ENOMEM
 * did not take the done interrupt; a DESTROY that failed with EFAULT
 * (its argument unread) destroyed nothing.
 */

/* A job: what it computes and where its data lie for the GPU. */
struct fz_job {
	struct simdrv_workload w;
	uint32_t ea, eb, ec;
	int32_t a[FZ_JOB_ELEMS], b[FZ_JOB_ELEMS], want[FZ_JOB_ELEMS];
	uint64_t va_desc, va_a, va_b, va_c;
	uint32_t nsubmit;	/* ops of t->ops up to START */
	uint32_t nops;		/* all of them: the wait and the clear follow */
	uint32_t session;
};

/* A byte range taken in a buffer or a page. */
struct fz_span {
	uint64_t off, len;
};

#define JOB_JS_STATUS		0x24	/* JS_STATUS of a slot */
#define JOB_STATUS_IDLE		0x00
#define JOB_STATUS_ACTIVE	0x08
/* The ends of a wait that job_check() tells apart. */
#define JOB_WAIT_ENDS		(RES_OK | RES_E(EIO) | RES_E(ETIMEDOUT))

/* A MATMUL (sides up to FZ_JOB_DIM) or a VADD, its inputs from the generator. */
static bool job_pick(struct fz_thread *t, struct fz_job *j)
{
	memset(j, 0, sizeof(*j));
	if (one_in(t, 3)) {
		j->w.op = ACCMAP_SIM_OP_VADD_I32;
		j->w.m = 1;
		j->w.k = 1;
		j->w.n = (uint32_t)range(t, 1, FZ_JOB_ELEMS);
	} else {
		j->w.op = ACCMAP_SIM_OP_MATMUL_I32;
		j->w.m = (uint32_t)range(t, 1, FZ_JOB_DIM);
		j->w.n = (uint32_t)range(t, 1, FZ_JOB_DIM);
		j->w.k = (uint32_t)range(t, 1, FZ_JOB_DIM);
	}
	j->w.format = (uint32_t)below(t, ACCMAP_PGT_COUNT);
	j->w.as = (uint32_t)below(t, SIM_AS_COUNT);
	j->w.slot = (uint32_t)below(t, SIM_JS_COUNT);
	if (simdrv_elems(&j->w, &j->ea, &j->eb, &j->ec) || j->ea > FZ_JOB_ELEMS ||
	    j->eb > FZ_JOB_ELEMS || j->ec > FZ_JOB_ELEMS) {
		FZ_FAIL(t, "job %u of %ux%ux%u: beyond the model's limits", j->w.op, j->w.m,
			j->w.n, j->w.k);
		return false;
	}
	for (uint32_t i = 0; i < j->ea; i++)
		j->a[i] = (int32_t)rnd(t);
	for (uint32_t i = 0; i < j->eb; i++)
		j->b[i] = one_in(t, 4) ? (int32_t)below(t, 16) : (int32_t)rnd(t);
	simdrv_reference(&j->w, j->a, j->b, j->want);
	return true;
}

/* The descriptor of @j, SIMDRV_JD_SIZE bytes at @desc. */
static void job_desc(const struct fz_job *j, uint8_t *desc)
{
	struct accmap_sim_job job = {
		.op = j->w.op, .m = j->w.m, .n = j->w.n, .k = j->w.k,
		.a = j->va_a, .b = j->va_b, .c = j->va_c,
	};

	simdrv_encode_job(desc, &job, 0);
}

/*
 * simdrv's list for @j, into t->ops: power up, program the session's
 * address space, submit (j->nsubmit ops, the last one START), then wait
 * for the done interrupt and clear it.  The GPU is the model as
 * accmap-sim.rst has it, what simdrv_probe() would read.
 */
static bool job_ops(struct fz_thread *t, struct fz_job *j)
{
	static const struct simdrv_gpu gpu = {
		.gpu_id = SIM_GPU_ID, .l2_present = 1, .shader_present = 0xff,
		.tiler_present = 1, .js_present = 0x7, .as_present = 0xff,
	};
	struct simdrv_submit sub = {
		.format = j->w.format, .as = j->w.as, .slot = j->w.slot, .head = j->va_desc,
		.timeout_us = FZ_JOB_WAIT_US,
	};

	j->nops = simdrv_build_ops(&gpu, &sub, t->ops);
	j->nsubmit = j->nops - 2;
	if (j->nops < 3 || j->nops > SIMDRV_OPS_MAX ||
	    t->ops[j->nsubmit].op != ACCMAP_REPLAY_OP_WAIT_IRQ) {
		FZ_FAIL(t, "simdrv's list of %u ops does not end with a wait and a write", j->nops);
		return false;
	}
	return true;
}

/* @cmd on the private client, with injection but never in a mutated envelope. */
static int job_ioctl(struct fz_thread *t, unsigned long cmd, void *arg, __uint128_t allowed,
		     const char *what, bool *intact)
{
	int ret;

	*intact = true;
	t->nowb = false;
	t->inj = false;
	t->inj_wb = false;
	ret = inject_ioctl(t, t->own, cmd, arg);
	fz_expect(t, what, ret, inject_allowed(t, cmd, allowed));
	inject_result(t, allowed, ret, intact);
	return ret;
}

/* Runs ops [@first, @first + @n) of t->ops in @j's session. */
static int job_run(struct fz_thread *t, const struct fz_job *j, uint32_t first, uint32_t n,
		   __uint128_t allowed, struct accmap_replay_run *r, const char *what)
{
	bool intact;
	int ret;

	memset(r, GARBAGE_BYTE, sizeof(*r));
	r->ops = (uintptr_t)(t->ops + first);
	r->nr_ops = n;
	r->session = j->session;
	r->flags = 0;
	r->pad = 0;
	ret = job_ioctl(t, ACCMAP_IOC_REPLAY_RUN, r, allowed, what, &intact);
	if (intact || t->inj_wb)
		run_check(t, r, ret, true);
	return ret;
}

/*
 * After a job's SETUP failed: a session that fails to build leaves
 * nothing behind, and one whose result cannot be copied
 * back is destroyed again.  STATE must hold the model's sessions and no
 * other (unless it cannot be taken: a session of the model maps a buffer
 * whose id is gone).
 */
static void job_no_session(struct fz_thread *t)
{
	struct fz_cl cl = { .fd = t->own, .slot = -1, .priv = true };
	struct accmap_ckpt a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.op = ACCMAP_CKPT_OP_STATE;
	a.data = (uintptr_t)t->ck;
	a.size = FZ_CK_ROOM;
	ret = ioctl(t->own, ACCMAP_IOC_CHECKPOINT, &a) ? -errno : 0;
	if (fz_expect(t, "STATE of the private client after a job's SETUP failed", ret,
		      RES_OK | (t->ns ? RES_E(ENOENT) : 0)) && !ret)
		ck_state_check(t, &cl, NULL, t->ck, a.size);
}

/* A job's SETUP as its rules have it; true if the session is there (j->session). */
static bool job_setup_done(struct fz_thread *t, struct fz_job *j,
			   const struct accmap_replay_setup *a, int ret, bool intact)
{
	if (!ret) {
		if (!a->session || a->session > FZ_SESS_MAX || sess_find(t, a->session) ||
		    a->failed_map != NO_INDEX || !a->table_pages) {
			FZ_FAIL(t,
				"REPLAY_SETUP of a job: session %u failed_map %#x table_pages %u",
				a->session, a->failed_map, a->table_pages);
			return false;
		}
		j->session = a->session;
		return true;
	}
	if ((intact || t->inj_wb) &&
	    (a->session || a->table_pages ||
	     (a->failed_map != NO_INDEX && a->failed_map >= a->nr_maps)))
		FZ_FAIL(t, "REPLAY_SETUP of a job: %s, session %u table_pages %u failed_map %#x",
			ename(-ret), a->session, a->table_pages, a->failed_map);
	t->jobs[JOBS_INJ] += t->inj;
	job_no_session(t);
	return false;
}

/*
 * REPLAY_SETUP of a job's session on the model, @a holding the maps or
 * the SVM range; the outputs start as garbage.  True if the session is
 * there (j->session).
 */
static bool job_setup(struct fz_thread *t, struct fz_job *j, struct accmap_replay_setup *a,
		      const char *what)
{
	bool intact;
	int ret;

	a->target = env.sim;
	a->format = j->w.format;
	a->as = j->w.as;
	a->session = GARBAGE_U32;
	a->failed_map = GARBAGE_U32;
	a->table_pages = GARBAGE_U32;
	ret = job_ioctl(t, ACCMAP_IOC_REPLAY_SETUP, a,
			RES_OK | (t->ns >= FZ_SESS_MAX ? RES_E(ENOSPC) : 0),
			what, &intact);
	return job_setup_done(t, j, a, ret, intact);
}

/*
 * After the submission failed by injection: whether none (0) or all (1)
 * of its list ran, as the model's registers say (a fresh session's GPU is
 * powered off, its slots idle); -1, and a failure, for anything else.
 * ENOMEM (no memory for the copy of the list) runs nothing; EFAULT, the
 * list unread or the result not written back, nothing or all.
 */
static int job_started(struct fz_thread *t, const struct fz_job *j, int ret)
{
	uint32_t ready = GARBAGE_U32, js = GARBAGE_U32;
	int err;

	t->jobs[JOBS_INJ]++;
	err = simdrv_read_reg(t->own, j->session, SIMDRV_SHADER_READY_LO, &ready);
	if (!err)
		err = simdrv_read_reg(t->own, j->session, MALI_JS(j->w.slot) + JOB_JS_STATUS, &js);
	if (err) {
		FZ_FAIL(t, "reading the model after a submission failed with %s: %s",
			ename(-ret), ename(-err));
		return -1;
	}
	if (!ready && js == JOB_STATUS_IDLE)
		return 0;
	if (ready == 0xff && js != JOB_STATUS_IDLE && ret == -EFAULT)
		return 1;
	FZ_FAIL(t, "a submission failed with %s, yet SHADER_READY is %#x and JS_STATUS %#x",
		ename(-ret), ready, js);
	return -1;
}

/*
 * After the wait failed by injection: waits for the job's end with runs
 * of a READ of JS_STATUS, which stand for the wait (a READ ends with the
 * MMU fault that stalls a job, where a POLL would run out its time).  A
 * wait that failed with ENOMEM ran nothing: the done interrupt it would
 * have taken is still raised then.
 */
static int job_settle(struct fz_thread *t, const struct fz_job *j, int failed,
		      struct accmap_replay_run *r)
{
	struct accmap_replay_op op = {
		.op = ACCMAP_REPLAY_OP_READ, .offset = MALI_JS(j->w.slot) + JOB_JS_STATUS,
	};
	uint32_t raw = 0;
	int ret;

	t->jobs[JOBS_INJ]++;
	for (unsigned int i = 0;; i++) {
		memset(r, GARBAGE_BYTE, sizeof(*r));
		r->ops = (uintptr_t)&op;
		r->nr_ops = 1;
		r->session = j->session;
		r->flags = 0;
		r->pad = 0;
		ret = ioctl(t->own, ACCMAP_IOC_REPLAY_RUN, r) ? -errno : 0;
		run_check(t, r, ret, true);
		if (ret || r->value != JOB_STATUS_ACTIVE || i >= FZ_JOB_WAIT_US / 1000)
			break;
		usleep(1000);
	}
	if (ret)
		return ret;
	if (r->value != SIMDRV_JOB_STATUS_DONE) {
		FZ_FAIL(t, "after a wait failed with %s, JS_STATUS is %#x", ename(-failed),
			r->value);
		return -EIO;
	}
	if (failed == -ENOMEM &&
	    (simdrv_read_reg(t->own, j->session, SIMDRV_JOB_IRQ_RAWSTAT, &raw) ||
	     !(raw & SIMDRV_JOB_IRQ_DONE(j->w.slot))))
		FZ_FAIL(t, "a wait failed with ENOMEM but took the done IRQ: JOB_IRQ_RAWSTAT %#x",
			raw);
	return 0;
}

/*
 * After a race: whether the job still ran when it was over (JS_STATUS
 * ACTIVE, or the run ends with the MMU fault the race caused), counted
 * to show how often the races meet a running job.  Changes nothing.
 */
static void job_overlap(struct fz_thread *t, const struct fz_job *j)
{
	struct accmap_replay_op op = {
		.op = ACCMAP_REPLAY_OP_READ, .offset = MALI_JS(j->w.slot) + JOB_JS_STATUS,
	};
	struct accmap_replay_run r = {
		.ops = (uintptr_t)&op, .nr_ops = 1, .session = j->session,
	};
	int ret = ioctl(t->own, ACCMAP_IOC_REPLAY_RUN, &r) ? -errno : 0;

	if ((!ret && r.value == JOB_STATUS_ACTIVE) ||
	    (ret == -EIO && r.reason == ACCMAP_REPLAY_MMU_FAULT))
		t->jobs[JOBS_OVERLAP]++;
}

/* Destroys @j's session; a DESTROY that failed with EFAULT did nothing: it goes after it. */
static void job_destroy(struct fz_thread *t, const struct fz_job *j)
{
	struct accmap_replay_destroy d = { .session = j->session, .pad = 0 };
	bool intact;
	int ret, again;

	ret = job_ioctl(t, ACCMAP_IOC_REPLAY_DESTROY, &d, RES_OK,
			"REPLAY_DESTROY of a job's session", &intact);
	t->jobs[JOBS_INJ] += t->inj;
	again = destroy_raw(t->own, j->session);
	fz_expect(t, ret ? "REPLAY_DESTROY after one failed by injection" :
			   "REPLAY_DESTROY of a destroyed session",
		  again, ret ? RES_OK : RES_E(ENOENT));
	t->stale_sess = j->session;
}

/* The kind of @j, for messages. */
static const char *job_name(const struct fz_job *j)
{
	return j->w.op == ACCMAP_SIM_OP_VADD_I32 ? "VADD" : "MATMUL";
}

/* A job's shape and place, for failure lines: "MATMUL 4x4x4 (format 0 as 1 slot 1". */
static const char *job_what(const struct fz_job *j, char *buf, size_t len)
{
	snprintf(buf, len, "%s %ux%ux%u (format %u as %u slot %u", job_name(j), j->w.m, j->w.n,
		 j->w.k, j->w.format, j->w.as, j->w.slot);
	return buf;
}

/*
 * Checks @j's end: @ret and @r of the run that waited for it, @status
 * (the descriptor's status word) and @c (C) as they are now.  Done, C
 * what the CPU computes; or, where @hole is set (a page of its inputs
 * unmapped while it ran), a read translation fault in the hole, nothing
 * written.
 */
static void job_check(struct fz_thread *t, const struct fz_job *j, int ret,
		      const struct accmap_replay_run *r, uint32_t status, const int32_t *c,
		      uint64_t hole, uint64_t hole_len, enum fz_jrace race)
{
	uint32_t st = r->fault_status, i;
	char what[96];

	if (!ret && status == SIMDRV_JOB_STATUS_DONE) {
		for (i = 0; i < j->ec && c[i] == j->want[i]; i++)
			;
		if (i == j->ec)
			t->jobs[JOBS_COMPARED]++;
		else
			FZ_FAIL(t, "%s): C[%u] is %#x, the CPU's %#x",
				job_what(j, what, sizeof(what)), i, (uint32_t)c[i],
				(uint32_t)j->want[i]);
		return;
	}
	if (ret == -EIO && hole && r->reason == ACCMAP_REPLAY_MMU_FAULT &&
	    r->fault_as == j->w.as && (st >> 8 & 3) == 2 && (st & 0xff) >= 0xc0 &&
	    (st & 0xff) <= 0xc3 && r->fault_addr >= hole && r->fault_addr < hole + hole_len &&
	    status == 0) {
		for (i = 0; i < j->ec && (uint32_t)c[i] == GARBAGE_U32; i++)
			;
		if (i == j->ec)
			t->jobs[JOBS_FAULTED]++;
		else
			FZ_FAIL(t, "%s faulted at %#llx, yet wrote C[%u] = %#x", job_name(j),
				(unsigned long long)r->fault_addr, i, (uint32_t)c[i]);
		return;
	}
	FZ_FAIL(t, "%s, race %s): %s, reason %u, fault %#x at %#llx in %#x, op %u, status %#x",
		job_what(j, what, sizeof(what)), fz_jrace_names[race], ename(-ret), r->reason,
		st,
		(unsigned long long)r->fault_addr, r->fault_as, r->failed_op, status);
	tap_diag("  job: descriptor at %#llx, A %#llx, B %#llx, C %#llx; hole %#llx",
		 (unsigned long long)j->va_desc, (unsigned long long)j->va_a,
		 (unsigned long long)j->va_b, (unsigned long long)j->va_c,
		 (unsigned long long)hole);
}

/* A job that never started: neither its status nor C written. */
static void job_unrun_check(struct fz_thread *t, const struct fz_job *j, uint32_t status,
			    const int32_t *c)
{
	uint32_t i;

	for (i = 0; i < j->ec && (uint32_t)c[i] == GARBAGE_U32; i++)
		;
	if (status || i < j->ec)
		FZ_FAIL(t, "a job whose submission ran nothing wrote: status %#x, C[%u] %#x",
			status, i, i < j->ec ? (uint32_t)c[i] : 0);
	t->jobs[JOBS_UNRUN]++;
}

/* A place for @len bytes (@align) in @size bytes, clear of the @*n in @used; it joins them. */
static uint64_t job_place(struct fz_thread *t, uint64_t size, uint64_t len, uint64_t align,
			  struct fz_span *used, unsigned int *n)
{
	uint64_t off = 0;

	for (unsigned int try = 0; try < 16; try++) {
		bool clear = true;

		off = below(t, (size - len) / align + 1) * align;
		for (unsigned int i = 0; i < *n && clear; i++)
			clear = off + len <= used[i].off || used[i].off + used[i].len <= off;
		if (clear)
			goto out;
	}
	/* After all of them: a page has room for a whole job. */
	off = 0;
	for (unsigned int i = 0; i < *n; i++) {
		if (used[i].off + used[i].len > off)
			off = used[i].off + used[i].len;
	}
	off = (off + align - 1) / align * align;
out:
	used[(*n)++] = (struct fz_span){ .off = off, .len = len };
	return off;
}

/* A private buffer a job may use: memory, writable through its id, written by this thread only. */
static struct fz_handle *job_buffer(struct fz_thread *t, const struct fz_handle *not)
{
	unsigned int start = t->nh ? (unsigned int)below(t, t->nh) : 0;

	for (unsigned int i = 0; i < t->nh; i++) {
		struct fz_handle *h = &t->h[(start + i) % t->nh];

		if (h != not && h->alloc && !h->readonly && !h->fromva && !h->shared &&
		    h->size <= FZ_SMALL_PAGES * env.page)
			return h;
	}
	return NULL;
}

/* A fresh buffer of the system heap for a job, when the model has none to give. */
static struct fz_handle *job_new_buffer(struct fz_thread *t)
{
	static const uint32_t flags[] = { 0, ACCMAP_ALLOC_WRITECOMBINE, ACCMAP_ALLOC_UNCACHED };
	struct accmap_create c;
	struct fz_handle *h;
	int ret;

	if (!own_room(t) || !(env.alloc_heaps & ACCMAP_HEAP_MASK_SYSTEM))
		return NULL;
	memset(&c, 0, sizeof(c));
	c.size = range(t, 1, 4) * env.page;
	c.flags = ACCMAP_CREATE_ALLOC;
	c.heap_mask = ACCMAP_HEAP_MASK_SYSTEM;
	c.alloc_flags = flags[below(t, TAP_ARRAY_SIZE(flags))];
	c.tag = FZ_TAG_BASE + (uint16_t)below(t, FZ_TAGS);
	ret = ioctl(t->own, ACCMAP_IOC_CREATE, &c) ? -errno : 0;
	if (!fz_expect(t, "CREATE with ALLOC of a job's buffer", ret, RES_OK | RES_E(ENOMEM)) ||
	    ret)
		return NULL;
	h = own_add(t, c.id, c.size);
	if (h) {
		h->alloc = true;
		h->heap = c.heap;
		h->flags = c.alloc_flags;
		h->tag = c.tag;
	}
	return h;
}

/* WRITE of @len bytes at @off of private buffer @h; its shadow (begun if it may be) follows. */
static bool job_write(struct fz_thread *t, struct fz_handle *h, uint64_t off, const void *src,
		      uint64_t len)
{
	int ret;

	sh_get(h);
	h->dirty = true;
	ret = am_write(t->own, h->id, off, src, len);
	if (!fz_expect(t, "WRITE of a job's data", ret, RES_OK))
		return false;
	if (h->sh) {
		memcpy(h->sh + off, src, len);
		sh_note(t, h, SHE_WRITE, 0, off, len);
	}
	return true;
}

/* Every page of @h's shadow against READ. */
static void job_sh_verify(struct fz_thread *t, const struct fz_handle *h)
{
	for (uint64_t off = 0; h && h->sh && off < h->size && !fz_stopped(); off += env.page)
		sh_read_check(t, h, off, h->size - off, "READ after a job gives");
}

/* FREE of a private id other than @a's and @b's; true if one went. */
static bool job_free_other(struct fz_thread *t, uint32_t a, uint32_t b)
{
	struct fz_handle *h;

	if (!t->nh)
		return false;
	h = &t->h[below(t, t->nh)];
	if (h->id == a || h->id == b)
		return false;
	if (fz_expect(t, "FREE of a buffer a running job does not use", am_free(t->own, h->id),
		      RES_OK))
		own_remove(t, h);
	return true;
}

/*
 * A job over buffers of the private client: the descriptor and C in
 * buffer X (mapped for reading and writing), A and B in X or in buffer Y
 * (mapped for reading only).  What the job writes goes into X's shadow,
 * and both buffers' shadows are then compared with READ whole.
 */
static bool op_job(struct fz_thread *t)
{
	struct accmap_replay_map *maps = t->rmaps;
	uint64_t off_desc, off_a, off_b, off_c, va_x, va_y, top;
	uint32_t x_id, y_id = 0, va_bits, status = GARBAGE_U32;
	struct fz_span used[2][4];
	unsigned int nused[2] = { 0, 0 };
	uint8_t desc[SIMDRV_JD_SIZE];
	int32_t c[FZ_JOB_ELEMS];
	struct fz_handle *x, *y = NULL, *in;
	struct accmap_replay_setup a;
	struct accmap_replay_run r;
	enum fz_jrace race = JR_NONE;
	struct fz_job j;
	int ret;

	if (t->own < 0)
		return false;
	x = job_buffer(t, NULL);
	if (!x)
		x = job_new_buffer(t);
	if (!x)
		return false;
	if (one_in(t, 2))
		y = job_buffer(t, x);
	x_id = x->id;
	y_id = y ? y->id : 0;
	in = y ? y : x;
	if (!job_pick(t, &j))
		return true;
	off_desc = job_place(t, x->size, SIMDRV_JD_SIZE, SIMDRV_JD_ALIGN, used[0], &nused[0]);
	off_c = job_place(t, x->size, j.ec * 4, 4, used[0], &nused[0]);
	off_a = job_place(t, in->size, j.ea * 4, 4, used[!!y], &nused[!!y]);
	off_b = job_place(t, in->size, j.eb * 4, 4, used[!!y], &nused[!!y]);
	va_bits = (uint32_t)range(t, ACCMAP_REPLAY_VA_BITS_MIN, ACCMAP_REPLAY_VA_BITS_MAX);
	top = 1ULL << va_bits;
	va_x = below(t, top / 2 / GPU_PAGE) * GPU_PAGE;
	va_y = va_x + x->size + below(t, 4) * GPU_PAGE;
	j.va_desc = va_x + off_desc;
	j.va_c = va_x + off_c;
	j.va_a = (y ? va_y : va_x) + off_a;
	j.va_b = (y ? va_y : va_x) + off_b;
	if (!job_ops(t, &j))
		return true;

	job_desc(&j, desc);
	for (uint32_t i = 0; i < j.ec; i++)
		c[i] = (int32_t)GARBAGE_U32;
	if (!job_write(t, x, off_desc, desc, sizeof(desc)) ||
	    !job_write(t, in, off_a, j.a, j.ea * 4) || !job_write(t, in, off_b, j.b, j.eb * 4) ||
	    !job_write(t, x, off_c, c, j.ec * 4))
		return true;

	memset(maps, 0, 2 * sizeof(*maps));
	maps[0].gpu_va = va_x;
	maps[0].length = x->size;
	maps[0].id = x->id;
	maps[0].flags = ACCMAP_REPLAY_MAP_READ | ACCMAP_REPLAY_MAP_WRITE |
			(one_in(t, 4) ? ACCMAP_REPLAY_MAP_EXEC : 0);
	maps[0].attr = (uint32_t)below(t, ACCMAP_REPLAY_ATTR_MAX + 1);
	if (y) {
		maps[1].gpu_va = va_y;
		maps[1].length = y->size;
		maps[1].id = y->id;
		maps[1].flags = ACCMAP_REPLAY_MAP_READ;
		maps[1].attr = (uint32_t)below(t, ACCMAP_REPLAY_ATTR_MAX + 1);
	}
	memset(&a, 0, sizeof(a));
	a.maps = (uintptr_t)maps;
	a.nr_maps = y ? 2 : 1;
	a.va_bits = va_bits;
	if (!job_setup(t, &j, &a, "REPLAY_SETUP of a job over buffers"))
		return true;

	ret = job_run(t, &j, 0, j.nsubmit, RES_OK, &r, "REPLAY_RUN submitting a job");
	if (ret && (!t->inj || job_started(t, &j, ret) != 1)) {
		/* Nothing ran (or a failure is reported): what was written stays. */
		if (!fz_stopped() &&
		    fz_expect(t, "READ of a job's status",
			      am_read(t->own, x_id, off_desc, &status, 4), RES_OK) &&
		    fz_expect(t, "READ of a job's C", am_read(t->own, x_id, off_c, c, j.ec * 4),
			      RES_OK))
			job_unrun_check(t, &j, status, c);
		goto out;
	}

	switch (below(t, 4)) {
	case 0:
		/* The session keeps Y's memory: the job reads it still. */
		if (y && fz_expect(t, "FREE of a running job's input buffer", am_free(t->own, y_id),
				   RES_OK)) {
			own_remove(t, y);
			race = JR_FREE_INPUT;
		}
		break;
	case 1:
		if (job_free_other(t, x_id, y_id))
			race = JR_FREE_OTHER;
		break;
	default:
		break;
	}
	if (race != JR_NONE)
		job_overlap(t, &j);
	/* own_remove() moves entries: look the job's up again. */
	x = own_find(t, x_id);
	y = y_id ? own_find(t, y_id) : NULL;

	/* job_check() judges how the wait ended, with all that the run says. */
	ret = job_run(t, &j, j.nsubmit, j.nops - j.nsubmit, JOB_WAIT_ENDS, &r,
		      "REPLAY_RUN waiting for a job");
	if (ret && t->inj)
		ret = job_settle(t, &j, ret, &r);
	if (!x || fz_stopped())
		goto out;
	if (!fz_expect(t, "READ of a job's status", am_read(t->own, x_id, off_desc, &status, 4),
		       RES_OK) ||
	    !fz_expect(t, "READ of a job's C", am_read(t->own, x_id, off_c, c, j.ec * 4), RES_OK))
		goto out;
	job_check(t, &j, ret, &r, status, c, 0, 0, race);
	if (!ret && x->sh) {
		memcpy(x->sh + off_desc, &status, 4);
		memcpy(x->sh + off_c, c, j.ec * 4);
		sh_note(t, x, SHE_JOB, 0, off_c, j.ec * 4);
	}
out:
	/* Gone with its session, the job leaves the buffers as their shadows say. */
	job_destroy(t, &j);
	if (!fz_stopped()) {
		job_sh_verify(t, own_find(t, x_id));
		if (y_id)
			job_sh_verify(t, own_find(t, y_id));
	}
	t->job_races[race]++;
	return true;
}

/* SVM SET_ATTR of [@p, @p + @len) while a job runs; GPU_RO only if @may_ro. */
static void job_attr(struct fz_thread *t, const struct fz_job *j, const uint8_t *p, size_t len,
		     bool may_ro)
{
	struct accmap_svm_op s;
	bool intact;

	memset(&s, 0, sizeof(s));
	s.session = j->session;
	s.op = ACCMAP_SVM_OP_SET_ATTR;
	s.start = (uintptr_t)p;
	s.size = len;
	s.attrs = (uint32_t)below(t, ACCMAP_SVM_ATTR_VALID + 1);
	if (!may_ro)
		s.attrs &= ~ACCMAP_SVM_ATTR_GPU_RO;
	s.granule = one_in(t, 2) ? 0 :
		    (uint32_t)range(t, ACCMAP_SVM_GRANULE_MIN, ACCMAP_SVM_GRANULE_MAX);
	s.location = ACCMAP_SVM_LOC_SYSTEM;
	/* Applied or not (injected), the job keeps the access it needs. */
	job_ioctl(t, ACCMAP_IOC_SVM, &s, RES_OK, "SVM SET_ATTR while a job runs", &intact);
}

/*
 * Unmaps [@p, @p + @len) of the thread's SVM memory by mapping PROT_NONE
 * anonymous memory in its place (MAP_FIXED unmaps what was there, as
 * munmap() does): a true hole could be taken by another thread's mmap()
 * before the page is mapped again, and mapping it again would then
 * replace that thread's mapping.  The GPU may not access PROT_NONE
 * memory, as it may not access a hole.
 */
static void job_unmap(struct fz_thread *t, uint8_t *p, size_t len)
{
	if (mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		FZ_FAIL(t, "mmap PROT_NONE over a page of the SVM range: %s", strerror(errno));
}

/* A page of the thread's SVM memory other than @n of @pages. */
static unsigned int job_page_not(struct fz_thread *t, const unsigned int *pages, unsigned int n)
{
	for (;;) {
		unsigned int p = (unsigned int)below(t, FZ_JSVM_PAGES), i;

		for (i = 0; i < n && pages[i] != p; i++)
			;
		if (i == n)
			return p;
	}
}

/*
 * A job over the thread's own anonymous memory, FZ_JSVM_PAGES of it, in an
 * SVM session that mirrors it: the descriptor, C, A and B (maybe in one
 * page) in pages of their own, the other pages for the races.
 */
static bool op_svmjob(struct fz_thread *t)
{
	const size_t pg = env.page, len = FZ_JSVM_PAGES * pg;
	uint8_t *base = t->jsvm, *gone = NULL;
	unsigned int pages[4], other, nused = 0;
	uint64_t hole = 0;
	struct fz_span used[2];
	struct accmap_replay_setup a;
	struct accmap_replay_run r;
	enum fz_jrace race = JR_NONE;
	struct fz_job j;
	uint32_t st;
	int ret;

	if (t->own < 0 || !base)
		return false;
	if (!job_pick(t, &j))
		return true;
	/* Pages: 0 the descriptor's, 1 C's, 2 A's, 3 B's (A's, half the time). */
	pages[0] = (unsigned int)below(t, FZ_JSVM_PAGES);
	pages[1] = job_page_not(t, pages, 1);
	pages[2] = job_page_not(t, pages, 2);
	pages[3] = one_in(t, 2) ? pages[2] : job_page_not(t, pages, 3);
	other = job_page_not(t, pages, 4);
	j.va_desc = (uintptr_t)base + pages[0] * pg +
		    below(t, (pg - SIMDRV_JD_SIZE) / SIMDRV_JD_ALIGN + 1) * SIMDRV_JD_ALIGN;
	j.va_c = (uintptr_t)base + pages[1] * pg + below(t, (pg - j.ec * 4) / 4 + 1) * 4;
	j.va_a = (uintptr_t)base + pages[2] * pg + job_place(t, pg, j.ea * 4, 4, used, &nused);
	if (pages[3] != pages[2])
		nused = 0;
	j.va_b = (uintptr_t)base + pages[3] * pg + job_place(t, pg, j.eb * 4, 4, used, &nused);
	if (!job_ops(t, &j))
		return true;
	/* The CPU writes the job and its inputs, and old words into C. */
	job_desc(&j, (uint8_t *)(uintptr_t)j.va_desc);
	memcpy((void *)(uintptr_t)j.va_a, j.a, j.ea * 4);
	memcpy((void *)(uintptr_t)j.va_b, j.b, j.eb * 4);
	for (uint32_t i = 0; i < j.ec; i++)
		((uint32_t *)(uintptr_t)j.va_c)[i] = GARBAGE_U32;

	memset(&a, 0, sizeof(a));
	a.va_bits = ACCMAP_REPLAY_VA_BITS_MAX;
	a.flags = ACCMAP_REPLAY_SETUP_SVM;
	a.svm_start = (uintptr_t)base;
	a.svm_size = len;
	if (!job_setup(t, &j, &a, "REPLAY_SETUP of an SVM session for a job"))
		return true;

	ret = job_run(t, &j, 0, j.nsubmit, RES_OK, &r, "REPLAY_RUN submitting an SVM job");
	if (ret && (!t->inj || job_started(t, &j, ret) != 1)) {
		/* Nothing ran (or a failure is reported): nothing written. */
		memcpy(&st, (void *)(uintptr_t)j.va_desc, 4);
		if (!fz_stopped())
			job_unrun_check(t, &j, st, (const int32_t *)(uintptr_t)j.va_c);
		goto out;
	}

	race = (enum fz_jrace)below(t, JR_COUNT);
	switch (race) {
	case JR_FREE_OTHER:
		if (!job_free_other(t, 0, 0))
			race = JR_NONE;
		break;
	case JR_MUNMAP_OTHER:
		gone = base + other * pg;
		job_unmap(t, gone, pg);
		break;
	case JR_REPLACE_OTHER:
		if (mmap(base + other * pg, pg, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			FZ_FAIL(t, "mmap MAP_FIXED in the SVM range: %s", strerror(errno));
		else
			word_store(base + other * pg, rnd(t));
		break;
	case JR_DONTNEED_OTHER:
		madvise(base + other * pg, pg, MADV_DONTNEED);
		break;
	case JR_ATTR_OTHER:
		job_attr(t, &j, base + other * pg, pg, true);
		break;
	case JR_ATTR_OWN:
		/* The GPU writes the descriptor's status and C: never GPU_RO on those. */
		if (one_in(t, 4)) {
			job_attr(t, &j, base, len, false);
		} else {
			unsigned int p = pages[below(t, 4)];

			job_attr(t, &j, base + p * pg, pg, p != pages[0] && p != pages[1]);
		}
		break;
	case JR_MUNMAP_OWN:
		gone = base + pages[2 + below(t, 2)] * pg;
		hole = (uintptr_t)gone;
		job_unmap(t, gone, pg);
		break;
	default:
		race = JR_NONE;
		break;
	}
	if (race != JR_NONE)
		job_overlap(t, &j);

	ret = job_run(t, &j, j.nsubmit, j.nops - j.nsubmit, JOB_WAIT_ENDS, &r,
		      "REPLAY_RUN waiting for an SVM job");
	if (ret && t->inj)
		ret = job_settle(t, &j, ret, &r);
	if (fz_stopped())
		goto out;
	memcpy(&st, (void *)(uintptr_t)j.va_desc, 4);
	job_check(t, &j, ret, &r, st, (const int32_t *)(uintptr_t)j.va_c, hole, pg, race);
	/* The job only reads A and B. */
	if ((uintptr_t)gone != (j.va_a & ~(uint64_t)(pg - 1)) &&
	    memcmp((void *)(uintptr_t)j.va_a, j.a, j.ea * 4))
		FZ_FAIL(t, "an SVM job changed A, which it only reads");
	if ((uintptr_t)gone != (j.va_b & ~(uint64_t)(pg - 1)) &&
	    memcmp((void *)(uintptr_t)j.va_b, j.b, j.eb * 4))
		FZ_FAIL(t, "an SVM job changed B, which it only reads");
out:
	job_destroy(t, &j);
	if (gone && mmap(gone, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0) == MAP_FAILED)
		FZ_FAIL(t, "mapping the thread's SVM page again: %s", strerror(errno));
	t->job_races[race]++;
	return true;
}

/* ---- the table of ops ---- */

static const struct fz_opdesc fz_ops[OP_COUNT] = {
	[OP_INFO] = { "info", 26000, op_info },
	[OP_BADCMD] = { "badcmd", 14000, op_badcmd },
	[OP_QHEAP] = { "query_heap", 10000, op_qheap },
	[OP_QPOOL] = { "query_pool", 4000, op_qpool },
	[OP_LABEL] = { "label", 5000, op_label },
	[OP_CREATE] = { "create", 4500, op_create },
	[OP_ALLOC] = { "alloc", 4000, op_alloc },
	[OP_FREE] = { "free", 4500, op_free },
	[OP_RW] = { "rw", 9000, op_rw },
	[OP_VERIFY] = { "verify", 500, op_verify },
	[OP_CACHE] = { "cache", 5000, op_cache },
	[OP_CLIST] = { "cache_list", 1200, op_clist },
	[OP_GETFD] = { "get_fd", 1500, op_getfd },
	[OP_FROMFD] = { "from_fd", 1800, op_fromfd },
	[OP_CLOSEFD] = { "close_fd", 800, op_closefd },
	[OP_SYNC] = { "sync", 2000, op_sync },
	[OP_MMAP] = { "mmap", 200, op_mmap },
	[OP_TOUCH] = { "touch", 600, op_touch },
	[OP_MUNMAP] = { "munmap", 150, op_munmap },
	[OP_FROMVA] = { "from_va", 600, op_fromva },
	[OP_RQUERY] = { "replay_query", 2500, op_rquery },
	[OP_RSETUP] = { "replay_setup", 150, op_rsetup },
	[OP_RRUN] = { "replay_run", 600, op_rrun },
	[OP_RDESTROY] = { "replay_destroy", 400, op_rdestroy },
	[OP_FOREIGN] = { "foreign", 50, op_foreign },
	[OP_VGEM] = { "vgem", 50, op_vgem },
	[OP_SEND] = { "send_fd", 80, op_send },
	[OP_RECV] = { "recv_fd", 80, op_recv },
	[OP_FORK] = { "fork", 5, op_fork },
	[OP_REOPEN] = { "reopen", 20, op_reopen },
	[OP_FDINFO] = { "fdinfo", 30, op_fdinfo },
	[OP_BIG] = { "big", 10, op_big },
	[OP_MAPOFF] = { "map_offset", 200, op_mapoff },
	[OP_CKSTATE] = { "ckpt_state", 1500, op_ckstate },
	[OP_CKDMABUF] = { "ckpt_dmabuf", 400, op_ckdmabuf },
	[OP_CKRESTORE] = { "ckpt_restore", 80, op_ckrestore },
	[OP_CKSVM] = { "svm_attr", 1500, op_cksvm },
	[OP_CKNOPERM] = { "ckpt_noperm", 300, op_cknoperm },
	[OP_JOB] = { "job", 60, op_job },
	[OP_SVMJOB] = { "svm_job", 60, op_svmjob },
};

static enum fz_op pick_op(struct fz_thread *t)
{
	unsigned int total = 0, r;

	for (int i = 0; i < OP_COUNT; i++)
		total += fz_ops[i].weight;
	r = (unsigned int)below(t, total);
	for (int i = 0; i < OP_COUNT; i++) {
		if (r < fz_ops[i].weight)
			return (enum fz_op)i;
		r -= fz_ops[i].weight;
	}
	return OP_INFO;
}

/* ---- one thread ---- */

static void *map_anon(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Memory with fixed kinds of pages, so that every pointer's fate is known. */
static bool thread_mem(struct fz_thread *t)
{
	size_t page = env.page, shm = FZ_SCR_RW + FZ_SCR_RO + FZ_SCR_NONE;
	size_t ops_len = FZ_OPS_MAX * sizeof(*t->ops), maps_len = FZ_RMAPS_MAX * sizeof(*t->rmaps);
	int memfd;

	t->arg = map_anon(4 * page, PROT_READ | PROT_WRITE, 0);
	t->ubuf = map_anon((U_RW_PAGES + 2) * page, PROT_READ | PROT_WRITE, 0);
	t->scr = map_anon((FZ_SCR_PAGES + FZ_SCR_SHARED) * page, PROT_READ | PROT_WRITE, 0);
	t->ops = map_anon(ops_len + page, PROT_READ | PROT_WRITE, 0);
	t->rmaps = map_anon(maps_len + page, PROT_READ | PROT_WRITE, 0);
	t->report = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	t->tmp = malloc(FZ_SMALL_PAGES * page);
	t->ck = map_anon(FZ_CK_ROOM, PROT_READ | PROT_WRITE, 0);
	t->jsvm = map_anon(FZ_JSVM_PAGES * page, PROT_READ | PROT_WRITE, 0);
	if (!t->ck || !t->jsvm || !t->arg || !t->ubuf || !t->scr || !t->ops || !t->rmaps ||
	    t->report == MAP_FAILED || !t->tmp || ops_len % page || maps_len % page)
		return false;
	/* arg: read-write, PROT_NONE, read-only, PROT_NONE. */
	mprotect(t->arg + page, page, PROT_NONE);
	mprotect(t->arg + 2 * page, page, PROT_READ);
	mprotect(t->arg + 3 * page, page, PROT_NONE);
	/* ubuf: U_RW_PAGES read-write, one read-only, one PROT_NONE. */
	memset(t->ubuf, 0x5a, (U_RW_PAGES + 1) * page);
	mprotect(t->ubuf + U_RW_PAGES * page, page, PROT_READ);
	mprotect(t->ubuf + (U_RW_PAGES + 1) * page, page, PROT_NONE);
	/* The ops and maps arrays end at a PROT_NONE page. */
	mprotect((uint8_t *)t->ops + ops_len, page, PROT_NONE);
	mprotect((uint8_t *)t->rmaps + maps_len, page, PROT_NONE);
	/* Scratch: written (so no page is the shared zero page), then carved. */
	fill_pattern(t->scr, (FZ_SCR_PAGES + FZ_SCR_SHARED) * page, 0, (unsigned int)t->rng);
	mprotect(t->scr + FZ_SCR_RW * page, FZ_SCR_RO * page, PROT_READ);
	mprotect(t->scr + (FZ_SCR_RW + FZ_SCR_RO) * page, FZ_SCR_NONE * page, PROT_NONE);
	memfd = memfd_create("fuzz-scratch", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)(FZ_SCR_SHM * page)) ||
	    mmap(t->scr + shm * page, FZ_SCR_SHM * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, memfd, 0) == MAP_FAILED) {
		if (memfd >= 0)
			close(memfd);
		return false;
	}
	close(memfd);
	fill_pattern(t->scr + shm * page, FZ_SCR_SHM * page, 0, (unsigned int)t->rng + 1);
	return true;
}

static void thread_mem_free(struct fz_thread *t)
{
	size_t page = env.page;

	munmap(t->arg, 4 * page);
	munmap(t->ubuf, (U_RW_PAGES + 2) * page);
	munmap(t->scr, (FZ_SCR_PAGES + FZ_SCR_SHARED) * page);
	munmap(t->ops, FZ_OPS_MAX * sizeof(*t->ops) + page);
	munmap(t->rmaps, FZ_RMAPS_MAX * sizeof(*t->rmaps) + page);
	munmap(t->report, page);
	munmap(t->ck, FZ_CK_ROOM);
	munmap(t->jsvm, FZ_JSVM_PAGES * page);
	free(t->tmp);
}

static void *thread_main(void *arg)
{
	struct fz_thread *t = arg;
	unsigned int idle = 0;

	fz_self = t;
	inject_thread(t);
	if (!thread_mem(t)) {
		FZ_FAIL(t, "thread memory: %s", strerror(errno));
		return NULL;
	}
	own_open(t);
	while (t->nop < t->target_ops && !fz_stopped()) {
		uint64_t t0 = now_ns();

		t->cur = pick_op(t);
		if (fz_ops[t->cur].fn(t)) {
			t->op_ns[t->cur] += now_ns() - t0;
			t->counts[t->cur]++;
			t->nop++;
			idle = 0;
		} else if (++idle > 100000) {
			FZ_FAIL(t, "no op could run");
		}
	}
	while (t->nvgem)
		vgem_put(t, t->vgem_handles[--t->nvgem]);
	while (t->nmaps)
		map_drop(t, t->nmaps - 1);
	own_close(t);
	thread_mem_free(t);
	if (t->mif >= 0)
		close(t->mif);
	return NULL;
}

/* ---- what debugfs says the device holds ---- */

struct fz_snap {
	unsigned long long clients, handles, allocations, orphans, used;
	unsigned long long sessions, mapped, table_pages, target_sessions, replay_rows;
};

/* The replay file: session rows, then "name\ttotal" lines, then one "target" line each. */
static bool snap_replay(struct fz_snap *s)
{
	char line[512], name[64];
	unsigned long long v;
	FILE *f = fopen(ACCMAP_DEBUGFS_DIR "/replay", "re");
	bool rows = true, header = true;

	if (!CHECK(f, "open debugfs replay: %s", strerror(errno)))
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (header) {
			header = false;
			continue;
		}
		if (sscanf(line, "sessions\t%llu", &v) == 1) {
			s->sessions = v;
			rows = false;
		} else if (sscanf(line, "mapped\t%llu", &v) == 1) {
			s->mapped = v;
		} else if (sscanf(line, "table_pages\t%llu", &v) == 1) {
			s->table_pages = v;
		} else if (sscanf(line, "target\t%63s\t%llu", name, &v) == 2) {
			s->target_sessions += v;
		} else if (rows) {
			s->replay_rows++;
		}
	}
	fclose(f);
	return true;
}

static bool snap_take(struct fz_snap *s)
{
	unsigned long long heaps;

	memset(s, 0, sizeof(*s));
	return dbg_rows("clients", &s->clients, "handles", &s->handles) &&
	       dbg_rows("allocations", &s->allocations, NULL, NULL) &&
	       dbg_rows("orphans", &s->orphans, NULL, NULL) &&
	       dbg_rows("heaps", &heaps, "used", &s->used) && snap_replay(s);
}

static void snap_print(const char *what, const struct fz_snap *s, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s: clients %llu handles %llu allocations %llu orphans %llu",
			 what, s->clients, s->handles, s->allocations, s->orphans);

	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " used %llu sessions %llu/%llu/%llu mapped %llu/%llu",
			 s->used, s->sessions, s->target_sessions, s->replay_rows, s->mapped,
			 s->table_pages);
}

static unsigned int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/* ---- one seed ---- */

/* Heaps and replay targets of the device; checks what the uAPI promises of them. */
static bool probe_device(void)
{
	struct accmap_replay_target_info ti;
	struct accmap_heap_info hi;
	int dev = am_open();
	bool found = false;

	if (dev < 0)
		return false;
	env.heaps = 0;
	env.dma32_heaps = 0;
	for (uint32_t h = 0; h < ACCMAP_HEAP_MAX; h++) {
		int ret = am_query_heap(dev, h, &hi);

		CHECK(ret == 0 || ret == -ENODEV, "QUERY_HEAP %u: %s", h, strerror(-ret));
		if (!ret)
			env.heaps |= 1U << h;
		if (!ret && hi.dma32)
			env.dma32_heaps |= 1U << h;
	}
	CHECK((env.heaps & (1U << ACCMAP_HEAP_SYSTEM)) && (env.heaps & (1U << ACCMAP_HEAP_USER)) &&
	      !(env.heaps & 0x3ffe0000U), "heaps %#x: system and user must exist, 17 to 29 not",
	      env.heaps);
	/* The device heap (QUERY_HEAP only) exists where the guest has device memory. */
	CHECK(!!(env.heaps & (1U << ACCMAP_HEAP_DEVICE)) == am_devmem_expected(),
	      "heaps %#x: device heap %s, ACCMAP_DEVMEM=%s", env.heaps,
	      env.heaps & (1U << ACCMAP_HEAP_DEVICE) ? "present" : "absent",
	      getenv("ACCMAP_DEVMEM") ?: "(unset)");
	env.alloc_heaps = env.heaps & ~(1U << ACCMAP_HEAP_USER | 1U << ACCMAP_HEAP_DEVICE);
	for (env.ntargets = 0; env.ntargets < 64; env.ntargets++) {
		int ret;

		memset(&ti, 0, sizeof(ti));
		ti.index = env.ntargets;
		ret = raw_ioctl(dev, ACCMAP_IOC_REPLAY_QUERY, &ti);
		if (ret == -ENOENT)
			break;
		if (!CHECK(ret == 0, "REPLAY_QUERY %u: %s", env.ntargets, strerror(-ret)))
			break;
		if (!found && !strcmp(ti.name, SIM_NAME)) {
			env.sim = env.ntargets;
			found = true;
		}
	}
	close(dev);
	return CHECK(found, "no replay target \"%s\"", SIM_NAME) && !tap_failed();
}

/* What the job ops did: results compared, and what raced them. */
static void print_jobs(uint64_t buf_jobs, uint64_t svm_jobs, const uint64_t *jobs,
		       const uint64_t *races)
{
	char line[256];
	size_t n = 0;

	tap_diag("  jobs: %llu over buffers, %llu over SVM; %llu results compared with the CPU's",
		 (unsigned long long)buf_jobs, (unsigned long long)svm_jobs,
		 (unsigned long long)jobs[JOBS_COMPARED]);
	tap_diag("  jobs: %llu faulted (an input unmapped by a race), %llu not started (injected)",
		 (unsigned long long)jobs[JOBS_FAULTED], (unsigned long long)jobs[JOBS_UNRUN]);
	for (int k = 0; k < JR_COUNT; k++)
		n += snprintf(line + n, sizeof(line) - n, " %s %llu", fz_jrace_names[k],
			      (unsigned long long)races[k]);
	tap_diag("  jobs: %llu checked all or nothing after injection; %llu raced:%s",
		 (unsigned long long)jobs[JOBS_INJ], (unsigned long long)jobs[JOBS_OVERLAP], line);
}

static void print_stats(uint64_t ns)
{
	uint64_t counts[OP_COUNT] = { 0 }, op_ns[OP_COUNT] = { 0 }, errs[128] = { 0 }, total = 0;
	uint64_t busy = 0, ck_total = 0, steps[CKS_COUNT] = { 0 }, svm_states = 0, sh_checks = 0;
	uint64_t jobs[JOBS_COUNT] = { 0 }, races[JR_COUNT] = { 0 };
	uint32_t svm_ranges = 0;
	char line[256];
	size_t n = 0;

	for (unsigned int i = 0; i < cfg.threads; i++) {
		for (int op = 0; op < OP_COUNT; op++) {
			counts[op] += fz_threads[i].counts[op];
			op_ns[op] += fz_threads[i].op_ns[op];
			busy += fz_threads[i].op_ns[op];
		}
		for (int e = 0; e < 128; e++)
			errs[e] += fz_threads[i].errs[e];
		total += fz_threads[i].nop;
	}
	tap_diag("seed %llu: %llu ops in %.1f s, %.0f ops/s", (unsigned long long)env.seed,
		 (unsigned long long)total, ns / 1e9, ns ? total * 1e9 / ns : 0.0);
	for (int op = 0; op <= OP_COUNT; op++) {
		if (op < OP_COUNT)
			n += snprintf(line + n, sizeof(line) - n, " %s %llu", fz_ops[op].name,
				      (unsigned long long)counts[op]);
		if ((op == OP_COUNT && n) || n > 90) {
			tap_diag("  ops:%s", line);
			n = 0;
		}
	}
	/* The checkpoint ops together, and how far the restores got. */
	for (int op = OP_CK_FIRST; op <= OP_CK_LAST; op++)
		ck_total += counts[op];
	for (unsigned int i = 0; i < cfg.threads; i++) {
		for (int s = 0; s < CKS_COUNT; s++)
			steps[s] += fz_threads[i].ck_steps[s];
		svm_states += fz_threads[i].ck_svm_states;
		if (fz_threads[i].ck_svm_ranges > svm_ranges)
			svm_ranges = fz_threads[i].ck_svm_ranges;
	}
	n = snprintf(line, sizeof(line), " %llu ops (%.1f %%); restore steps:",
		     (unsigned long long)ck_total, total ? ck_total * 100.0 / total : 0.0);
	for (int s = 0; s < CKS_COUNT; s++)
		n += snprintf(line + n, sizeof(line) - n, " %s %llu", fz_ck_step_names[s],
			      (unsigned long long)steps[s]);
	tap_diag("  checkpoint:%s", line);
	tap_diag("  checkpoint: SVM ranges checked in STATE %llu times, at most %u ranges",
		 (unsigned long long)svm_states, svm_ranges);
	for (unsigned int i = 0; i < cfg.threads; i++)
		sh_checks += fz_threads[i].sh_checks;
	tap_diag("  contents: %llu reads (READ, maps, exports, cache ops, forks) vs a shadow",
		 (unsigned long long)sh_checks);
	for (unsigned int i = 0; i < cfg.threads; i++) {
		for (int k = 0; k < JOBS_COUNT; k++)
			jobs[k] += fz_threads[i].jobs[k];
		for (int k = 0; k < JR_COUNT; k++)
			races[k] += fz_threads[i].job_races[k];
	}
	print_jobs(counts[OP_JOB], counts[OP_SVMJOB], jobs, races);
	n = 0;
	/* Where the threads' time went: the kinds of op above 2 %, in per mille. */
	n = 0;
	for (int op = 0; op <= OP_COUNT; op++) {
		if (op < OP_COUNT && busy && op_ns[op] * 50 > busy)
			n += snprintf(line + n, sizeof(line) - n, " %s %llu", fz_ops[op].name,
				      (unsigned long long)(op_ns[op] * 1000 / busy));
		if ((op == OP_COUNT && n) || n > 90) {
			tap_diag("  time (per mille):%s", line);
			n = 0;
		}
	}
	n = 0;
	for (int e = 0; e <= 128; e++) {
		if (e < 128 && errs[e])
			n += snprintf(line + n, sizeof(line) - n, " %s %llu", e ? ename(e) : "ok",
				      (unsigned long long)errs[e]);
		if ((e == 128 && n) || n > 90) {
			tap_diag("  results:%s", line);
			n = 0;
		}
	}
}

static void close_env_fds(void)
{
	int *fds[] = { &env.null_fd, &env.vgem, &env.dma_heap, &env.udmabuf, &env.sock };

	for (size_t i = 0; i < TAP_ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* Everything the seed opened is closed: debugfs must be back to where it was. */
static void settle(const struct fz_snap *before)
{
	char a[256], b[256];
	struct fz_snap now;

	for (int waited = 0;; waited += 50) {
		if (!snap_take(&now))
			return;
		if (!memcmp(&now, before, sizeof(now)))
			return;
		if (waited >= FZ_SETTLE_MS)
			break;
		usleep(50 * 1000);
	}
	snap_print("before", before, a, sizeof(a));
	snap_print("after", &now, b, sizeof(b));
	FZ_FAIL(NULL, "debugfs not back to where it was; %s", a);
	FZ_FAIL(NULL, "%s", b);
}

static void run_seed(uint64_t seed)
{
	struct sigaction sa = { .sa_sigaction = fz_on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER };
	uint64_t per = cfg.ops / cfg.threads, t0, ns, total = 0;
	unsigned int fds_before, fds_after;
	struct fz_snap before;
	struct fz_fd dummy;
	int sv[2], status;

	memset(&env, 0, sizeof(env));
	env.seed = seed;
	env.page = page_size();
	env.ram = total_ram_bytes();
	env.null_fd = -1;
	env.vgem = -1;
	env.dma_heap = -1;
	env.udmabuf = -1;
	env.sock = -1;
	tap_diag("seed %llu: %llu ops, %u threads (fuzz --seed %llu --ops %llu --threads %u)",
		 (unsigned long long)seed, (unsigned long long)cfg.ops, cfg.threads,
		 (unsigned long long)seed, (unsigned long long)cfg.ops, cfg.threads);
	fds_before = count_fds();
	if (!snap_take(&before) || !probe_device())
		return;
	if (!inject_begin(seed))
		return;

	env.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	env.vgem = vgem_open();
	if (env.vgem >= 0) {
		int maps = vgem_maps_at_import(env.vgem);

		if (maps < 0)
			return;
		env.vgem_maps = maps;
		tap_diag("  vgem %s", maps ? "maps at import" : "attaches at import, maps on use");
	}
	env.dma_heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	env.udmabuf = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	tap_diag("  foreign dma-bufs from:%s%s%s%s", env.vgem >= 0 ? " vgem" : "",
		 env.dma_heap >= 0 ? " dma-heap" : "", env.udmabuf >= 0 ? " udmabuf" : "",
		 env.vgem < 0 && env.dma_heap < 0 && env.udmabuf < 0 ? " none" : "");

	/* The helper is forked before any thread exists. */
	if (!CHECK_OK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)))
		return;
	fflush(stdout);
	env.helper = fork();
	if (env.helper == 0) {
		close(sv[0]);
		helper_main(sv[1]);
	}
	close(sv[1]);
	env.sock = sv[0];
	if (!CHECK(env.helper > 0, "fork: %s", strerror(errno)))
		return;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	for (unsigned int i = 0; i < FZ_FDS; i++) {
		memset(&fz_fds[i], 0, sizeof(fz_fds[i]));
		fz_fds[i].fd = -1;
	}
	for (unsigned int i = 0; i < FZ_DEVS; i++)
		dev_add(NULL);
	env.svm_len = FZ_SVM_PAGES * env.page;
	env.svm = map_anon(env.svm_len, PROT_READ | PROT_WRITE, 0);
	if (env.svm)
		memset(env.svm, 0x3c, env.svm_len);

	t0 = now_ns();
	for (unsigned int i = 0; i < cfg.threads; i++) {
		struct fz_thread *t = &fz_threads[i];
		uint64_t s = seed ^ (0x51ed270b27ULL * (i + 1));

		memset(t, 0, sizeof(*t));
		t->idx = i;
		t->rng = splitmix(&s);
		t->own = -1;
		t->target_ops = per + (i < cfg.ops % cfg.threads);
		if (pthread_create(&t->thread, NULL, thread_main, t)) {
			FZ_FAIL(NULL, "pthread_create failed");
			cfg.threads = i;
			break;
		}
	}
	for (unsigned int i = 0; i < cfg.threads; i++) {
		pthread_join(fz_threads[i].thread, NULL);
		total += fz_threads[i].nop;
	}
	ns = now_ns() - t0;
	inject_end();
	if (env.svm)
		munmap(env.svm, env.svm_len);
	env.svm = NULL;

	/* The helper goes, then every fd: what they held must go with them. */
	msg_send(env.sock, &(struct fz_msg){ .type = MSG_QUIT }, -1, 0);
	while (waitpid(env.helper, &status, 0) < 0 && errno == EINTR)
		;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "helper exit status %#x", status);
	for (unsigned int i = 0; i < FZ_FDS; i++) {
		if (fz_fds[i].fd >= 0)
			fd_close_locked(&fz_fds[i]);
	}
	close_env_fds();
	{
		int dev = am_open();

		for (unsigned int tag = 0; dev >= 0 && tag < FZ_TAGS; tag++)
			CHECK(am_set_label(dev, FZ_TAG_BASE + tag, "") == 0, "removing label %u",
			      FZ_TAG_BASE + tag);
		if (dev >= 0)
			close(dev);
	}
	(void)dummy;
	settle(&before);
	fds_after = count_fds();
	CHECK(fds_after == fds_before, "seed %llu: %u fds open after, %u before",
	      (unsigned long long)seed, fds_after, fds_before);
	print_stats(ns);
	__atomic_add_fetch(&fz_sh->total_ops, total, __ATOMIC_SEQ_CST);
	for (unsigned int i = 0; i < cfg.threads; i++) {
		for (int op = 0; op < OP_COUNT; op++) {
			fz_sh->ops[op] += fz_threads[i].counts[op];
			fz_sh->inj_calls[op] += fz_threads[i].inj_calls[op];
		}
		fz_sh->sh_checks += fz_threads[i].sh_checks;
		for (int k = 0; k < JOBS_COUNT; k++)
			fz_sh->jobs[k] += fz_threads[i].jobs[k];
		for (int k = 0; k < JR_COUNT; k++)
			fz_sh->job_races[k] += fz_threads[i].job_races[k];
	}
	CHECK(total == cfg.ops || tap_failed(), "seed %llu: %llu ops done of %llu",
	      (unsigned long long)seed, (unsigned long long)total, (unsigned long long)cfg.ops);
}

/*
 * A seed counts as hung after TAP_TEST_TIMEOUT per 65,536 operations (so
 * 600 s at the default size): a debug kernel under injection on a busy
 * host runs a whole-size seed in 300 s and more without hanging.
 */
static void seed_test(void)
{
	unsigned int i = __atomic_fetch_add(&fz_sh->next_seed, 1, __ATOMIC_SEQ_CST);
	uint64_t units = (cfg.ops + 65535) / 65536;

	alarm(TAP_TEST_TIMEOUT * (unsigned int)(units < 8 ? (units ?: 1) : 8));
	run_seed(cfg.seeds[i]);
}

/* A line per ~90 characters of "name count" pairs, under @head; counts of 0 left out. */
static void print_per_op(const char *head, const uint64_t *v)
{
	char line[256];
	size_t n = 0;

	for (int op = 0; op <= OP_COUNT; op++) {
		if (op < OP_COUNT && v[op])
			n += snprintf(line + n, sizeof(line) - n, " %s %llu", fz_ops[op].name,
				      (unsigned long long)v[op]);
		if ((op == OP_COUNT && n) || n > 90) {
			tap_diag("  %s:%s", head, line);
			n = 0;
		}
	}
}

static void total_test(void)
{
	unsigned long long total = __atomic_load_n(&fz_sh->total_ops, __ATOMIC_SEQ_CST);
	uint64_t inj = 0;

	tap_diag("%llu operations over %u seeds, %llu failures injected", total, cfg.nseeds,
		 (unsigned long long)__atomic_load_n(&fz_sh->injected, __ATOMIC_SEQ_CST));
	/* The seeds' processes have all ended: the counts are final. */
	print_per_op("op mix", fz_sh->ops);
	for (int op = 0; op < OP_COUNT; op++)
		inj += fz_sh->inj_calls[op];
	/* Every EFAULT under injection counts, though the call could give it anyway. */
	tap_diag("  calls injection may have failed (any EFAULT under injection too): %llu; by op:",
		 (unsigned long long)inj);
	print_per_op("injected", fz_sh->inj_calls);
	tap_diag("  reads compared with a contents shadow: %llu",
		 (unsigned long long)fz_sh->sh_checks);
	print_jobs(fz_sh->ops[OP_JOB], fz_sh->ops[OP_SVMJOB], fz_sh->jobs, fz_sh->job_races);
	CHECK(total >= cfg.min_ops, "%llu operations, fewer than %llu", total,
	      (unsigned long long)cfg.min_ops);
}

static void injected_test(void)
{
	unsigned long long n = __atomic_load_n(&fz_sh->injected, __ATOMIC_SEQ_CST);

	CHECK(n >= cfg.min_injected, "%llu failures injected, fewer than %llu", n,
	      (unsigned long long)cfg.min_injected);
}

/* ---- main ---- */

static uint64_t num_arg(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s) {
		fprintf(stderr, "fuzz: bad %s \"%s\"\n", what, s);
		exit(2);
	}
	return v;
}

static void print_usage(void)
{
	printf("usage: fuzz [--seed S] [--seeds K] [--ops N] [--threads T] [--min-ops M]\n"
	       "  defaults: %u seeds from a random base, %u ops each, %u threads, M %llu\n"
	       "  environment: ACCMAP_FUZZ_SEED, ACCMAP_FUZZ_SEEDS, ACCMAP_FUZZ_OPS,\n"
	       "  ACCMAP_FUZZ_THREADS, ACCMAP_FUZZ_MIN_OPS\n"
	       "  ACCMAP_FUZZ_INJECT=none|half|all: fault injection (debugfs fail*) on no\n"
	       "  seed, the odd seeds or every seed; a run of the default size must then\n"
	       "  inject ACCMAP_FUZZ_MIN_INJECTED failures (default %llu)\n",
	       FZ_DEFAULT_SEEDS, FZ_DEFAULT_OPS, FZ_DEFAULT_THREADS, FZ_DEFAULT_MIN_OPS,
	       FZ_DEFAULT_MIN_INJECTED);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seeds", required_argument, NULL, 'k' },
		{ "ops", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "min-ops", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *seed_s = getenv("ACCMAP_FUZZ_SEED"), *seeds_s = getenv("ACCMAP_FUZZ_SEEDS");
	const char *ops_s = getenv("ACCMAP_FUZZ_OPS"), *threads_s = getenv("ACCMAP_FUZZ_THREADS");
	const char *min_s = getenv("ACCMAP_FUZZ_MIN_OPS");
	const char *min_inj_s = getenv("ACCMAP_FUZZ_MIN_INJECTED");
	const char *inject_s = getenv("ACCMAP_FUZZ_INJECT");
	struct tap_test *tests;
	uint64_t base;
	int c;

	while ((c = getopt_long(argc, argv, "s:k:n:t:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seed_s = optarg;
			break;
		case 'k':
			seeds_s = optarg;
			break;
		case 'n':
			ops_s = optarg;
			break;
		case 't':
			threads_s = optarg;
			break;
		case 'm':
			min_s = optarg;
			break;
		case 'h':
			print_usage();
			return 0;
		default:
			print_usage();
			return 2;
		}
	}
	if (optind < argc) {
		print_usage();
		return 2;
	}
	/* ACCMAP_FUZZ_INJECT: "half" (odd seeds), "all", or unset/"none". */
	if (inject_s && !strcmp(inject_s, "half")) {
		cfg.inject = FZ_INJECT_HALF;
	} else if (inject_s && !strcmp(inject_s, "all")) {
		cfg.inject = FZ_INJECT_ALL;
	} else if (inject_s && *inject_s && strcmp(inject_s, "none")) {
		fprintf(stderr, "fuzz: ACCMAP_FUZZ_INJECT is none, half or all\n");
		return 2;
	}
	/*
	 * Under injection, the kernel's rseq update on the way back to user
	 * space from an ioctl (make-it-fail still on) may have its user copy
	 * failed, and rseq then kills the thread with SIGSEGV.  glibc's rseq
	 * registration is a tunable read at start: run once more without it.
	 */
	if (cfg.inject && __rseq_size) {
		const char *tun = getenv("GLIBC_TUNABLES");

		if (tun && strstr(tun, "glibc.pthread.rseq=0")) {
			fprintf(stderr, "fuzz: glibc registers rseq despite GLIBC_TUNABLES\n");
			return 2;
		}
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "fuzz: cannot run again without rseq: %s\n", strerror(errno));
		return 2;
	}
	cfg.nseeds = seeds_s ? (unsigned int)num_arg(seeds_s, "seed count") :
			       seed_s ? 1 : FZ_DEFAULT_SEEDS;
	cfg.ops = ops_s ? num_arg(ops_s, "op count") : FZ_DEFAULT_OPS;
	cfg.threads = threads_s ? (unsigned int)num_arg(threads_s, "thread count") :
				  FZ_DEFAULT_THREADS;
	if (!cfg.nseeds || cfg.nseeds > FZ_MAX_SEEDS || !cfg.ops || !cfg.threads ||
	    cfg.threads > FZ_MAX_THREADS) {
		fprintf(stderr, "fuzz: 1 to %d seeds, 1 to %d threads, at least one op\n",
			FZ_MAX_SEEDS, FZ_MAX_THREADS);
		return 2;
	}
	/* A run of the default size must reach the CI figure; a chosen one, all it asked for. */
	cfg.min_ops = min_s ? num_arg(min_s, "minimum op count") :
		      seeds_s || seed_s || ops_s ? cfg.nseeds * cfg.ops : FZ_DEFAULT_MIN_OPS;
	cfg.min_injected = min_inj_s ? num_arg(min_inj_s, "minimum injected count") : 0;
	if (!min_inj_s && cfg.inject && !(seeds_s || seed_s || ops_s))
		cfg.min_injected = FZ_DEFAULT_MIN_INJECTED;
	if (seed_s) {
		base = num_arg(seed_s, "seed");
	} else {
		uint64_t s = now_ns() ^ ((uint64_t)getpid() << 32);

		base = splitmix(&s) >> 16;
	}
	for (unsigned int i = 0; i < cfg.nseeds; i++)
		cfg.seeds[i] = base + i;

	fz_sh = mmap(NULL, sizeof(*fz_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		     -1, 0);
	tests = calloc(cfg.nseeds + 2, sizeof(*tests));
	if (fz_sh == MAP_FAILED || !tests)
		return 1;
	for (unsigned int i = 0; i < cfg.nseeds; i++) {
		char *name;

		if (asprintf(&name, "seed %llu", (unsigned long long)cfg.seeds[i]) < 0)
			return 1;
		tests[i] = (struct tap_test){ name, seed_test };
	}
	{
		char *name;

		if (asprintf(&name, "total operations >= %llu",
			     (unsigned long long)cfg.min_ops) < 0)
			return 1;
		tests[cfg.nseeds] = (struct tap_test){ name, total_test };
		if (!cfg.min_injected)
			return tap_run(tests, cfg.nseeds + 1);
		if (asprintf(&name, "failures injected >= %llu",
			     (unsigned long long)cfg.min_injected) < 0)
			return 1;
		tests[cfg.nseeds + 1] = (struct tap_test){ name, injected_test };
	}
	return tap_run(tests, cfg.nseeds + 2);
}
