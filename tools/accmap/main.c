// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl: look at and exercise /dev/accmap from the command line.
 *
 *   accmapctl [-d DEVICE] [-j] heaps | pool | list | svm | top | alloc | info | label ...
 *   accmapctl [-d DEVICE] [-j] targets | record | replay | show ...
 *   accmapctl import-gpureplay DIR OUT
 *
 * Exit status: 0 on success, 1 when a call fails (the message names the
 * call and gives strerror), 2 on a usage error.  Everything that talks to
 * the device goes through libaccmap.
 *
 * This file: the command table, the options every command has, messages,
 * numbers, and main().  printer.c prints tables and JSON; memory.c,
 * svm.c, checkpoint.c, replay.c and top.c hold one family of commands
 * each.
 */
#include "accmapctl.h"

/* ------------------------------------------------------------------ */
/* Globals */

const char *prog = "accmapctl";
char cmd_name[64] = "accmapctl";
const char *device = ACCMAP_DEVICE_PATH;
bool json_out;
bool exact_bytes;
const char *debugfs_dir = DEBUGFS_ACCMAP;

/* The options of the commands that have no others. */
const struct option device_options[] = {
	{ "device", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option bytes_device_options[] = {
	{ "bytes", no_argument, NULL, 'b' },
	{ "device", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* ------------------------------------------------------------------ */
/* Messages */

/* "accmapctl CMD: " and the message of @fmt and @ap on stderr. */
static void vmessage(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cmd_name);
	vfprintf(stderr, fmt, ap);
}

/* "accmapctl CMD: <what>: <strerror>" on stderr; returns exit status 1. */
int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
	return EXIT_FAILURE;
}

/* A usage error and where to find help; returns exit status 2. */
int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", cmd_name);
	return EXIT_USAGE;
}

/* After getopt's own message about a bad option; returns exit status 2. */
static int bad_option(void)
{
	fprintf(stderr, "Try '%s --help'.\n", cmd_name);
	return EXIT_USAGE;
}

/* A further line of explanation after an error. */
void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void out_of_memory(void)
{
	fprintf(stderr, "%s: out of memory\n", cmd_name);
	exit(EXIT_FAILURE);
}

void *xrealloc(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (size && n > SIZE_MAX / size)
		out_of_memory();
	bytes = n * size;
	p = realloc(p, bytes ? bytes : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		out_of_memory();
	return p;
}

/* ------------------------------------------------------------------ */
/* Numbers */

/* An unsigned number in C syntax (decimal, 0x hex, 0 octal), up to @max. */
bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() would take leading blanks and negate a leading '-'. */
	if (!s || !(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

bool parse_u32(const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (!parse_u64(s, max, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* A size in bytes with an optional K, M, G or T suffix (powers of 1024). */
bool parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !(*s >= '0' && *s <= '9'))
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return false;

	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	case '\0':
		break;
	default:
		return false;
	}
	if (shift) {
		end++;
		/* "KiB" and "KB" mean the same here. */
		if (!strcmp(end, "iB") || !strcmp(end, "B"))
			end += strlen(end);
	}
	if (*end)
		return false;
	if (v > (UINT64_MAX >> shift))
		return false;
	*out = (unsigned long long)v << shift;
	return true;
}

/*
 * Bytes for people: "512 B", "4 KiB", "1.5 MiB"; with @exact, the plain
 * number of bytes.  Returns @buf.
 */
const char *fmt_bytes(char *buf, size_t len, uint64_t bytes, bool exact)
{
	static const char *const units[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	unsigned int u = 0;
	double v;

	if (exact || bytes < 1024) {
		snprintf(buf, len, exact ? "%llu" : "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (u + 1 < ARRAY_SIZE(units) &&
	       bytes >= (1ULL << (10 * (u + 1))))
		u++;
	if (!(bytes & ((1ULL << (10 * u)) - 1))) {
		snprintf(buf, len, "%llu %s", (unsigned long long)(bytes >> (10 * u)),
			 units[u]);
		return buf;
	}
	v = (double)bytes / (double)(1ULL << (10 * u));
	/* 1023.96 KiB would print as 1024.0 KiB: show 1.0 MiB instead. */
	if (v >= 1023.95 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* @a * @b, or UINT64_MAX if that does not fit. */
uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return UINT64_MAX;
	return r;
}

const char *fmt_alloc_flags(char *buf, size_t len, uint32_t flags)
{
	const uint32_t attrs = ACCMAP_ALLOC_WRITECOMBINE | ACCMAP_ALLOC_UNCACHED;
	uint32_t unknown = flags & ~ACCMAP_ALLOC_VALID_FLAGS;
	const char *contig = flags & ACCMAP_ALLOC_CONTIGUOUS ? ", contiguous" : "";
	const char *low = flags & ACCMAP_ALLOC_DMA32 ? ", below 4 GiB" : "";
	const char *type = "cached";

	if ((flags & attrs) == attrs)
		type = "writecombine and uncached";
	else if (flags & ACCMAP_ALLOC_WRITECOMBINE)
		type = "writecombine";
	else if (flags & ACCMAP_ALLOC_UNCACHED)
		type = "uncached";

	if (unknown)
		snprintf(buf, len, "0x%x (%s%s%s, unknown 0x%x)", flags, type, contig, low,
			 unknown);
	else
		snprintf(buf, len, "0x%x (%s%s%s)", flags, type, contig, low);
	return buf;
}

const char *fmt_state(char *buf, size_t len, uint32_t state)
{
	uint32_t known = ACCMAP_STATE_ALLOCATED | ACCMAP_STATE_EXPORTED |
			 ACCMAP_STATE_READONLY | ACCMAP_STATE_CONTIGUOUS;

	snprintf(buf, len, "0x%x (%s%s%s%s%s)", state,
		 state & ACCMAP_STATE_ALLOCATED ? "allocated" : "no memory",
		 state & ACCMAP_STATE_EXPORTED ? ", exported" : "",
		 state & ACCMAP_STATE_READONLY ? ", read-only" : "",
		 state & ACCMAP_STATE_CONTIGUOUS ? ", contiguous" : "",
		 state & ~known ? ", unknown bits" : "");
	return buf;
}

/* ------------------------------------------------------------------ */
/* Common pieces of the subcommands */

/*
 * getopt_long() over a subcommand's arguments.  argv[0] becomes
 * "accmapctl CMD" so that getopt's own messages name the subcommand.
 */
void begin_options(char **argv)
{
	snprintf(cmd_name, sizeof(cmd_name), "%s %s", prog, argv[0]);
	argv[0] = cmd_name;
	optind = 0;	/* glibc and musl: start afresh */
	opterr = 1;
}

/* Whether long option @name is among @opts and gives @c. */
static bool has_option(const struct option *opts, const char *name, int c)
{
	for (; opts->name; opts++)
		if (opts->val == c && !strcmp(opts->name, name))
			return true;
	return false;
}

/*
 * The next option of a subcommand, after begin_options(): getopt_long()
 * over @optstring and @opts, with what every subcommand does alike done
 * here: -d/--device (where @optstring has it) sets the device, -b/--bytes
 * (where @opts has --bytes as 'b') exact_bytes, --debugfs debugfs_dir,
 * -h/--help prints @usage, and an unknown option or a missing argument
 * gets getopt's message and a pointer to --help.  Returns the subcommand's
 * own option, OPT_END after the last one, or OPT_EXIT with *@status set to
 * the exit status the subcommand returns now.
 */
int next_option(int argc, char **argv, const char *optstring,
		const struct option *opts, void (*usage)(FILE *), int *status)
{
	int c;

	for (;;) {
		c = getopt_long(argc, argv, optstring, opts, NULL);
		switch (c) {
		case 'd':
			device = optarg;
			continue;
		case OPT_DEBUGFS:
			debugfs_dir = optarg;
			continue;
		case 'b':
			if (!has_option(opts, "bytes", 'b'))
				return c;
			exact_bytes = true;
			continue;
		case 'h':
			usage(stdout);
			*status = EXIT_SUCCESS;
			return OPT_EXIT;
		case '?':
		case ':':
			*status = bad_option();
			return OPT_EXIT;
		default:
			return c;
		}
	}
}

/*
 * All the options of a command that has only common ones (next_option()),
 * and no operand.  Returns -1 to go on, or the exit status to return now.
 */
int common_options(int argc, char **argv, const char *optstring,
		   const struct option *opts, void (*usage)(FILE *))
{
	int c, status;

	begin_options(argv);
	while ((c = next_option(argc, argv, optstring, opts, usage, &status)) != OPT_END)
		if (c == OPT_EXIT)
			return status;
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return -1;
}

/*
 * common_options(), then open_device() into *@fd: for the commands that
 * have only common options and talk to the device.  Returns -1 to go on,
 * or the exit status to return now.
 */
int device_command(int argc, char **argv, const char *optstring,
		   const struct option *opts, void (*usage)(FILE *), int *fd)
{
	int ret = common_options(argc, argv, optstring, opts, usage);

	if (ret >= 0)
		return ret;
	ret = open_device(fd);
	return ret ? ret : -1;
}

/* -p/--pid: a process id into *@pid; 0, or a usage error's exit status. */
int pid_option(const char *arg, uint32_t *pid)
{
	if (!parse_u32(arg, INT32_MAX, pid) || !*pid)
		return usage_error("bad pid '%s'", arg);
	return 0;
}

int open_device(int *fd)
{
	int ret = accmap_open_path(device, fd);

	if (!ret)
		return 0;
	fail(ret, "accmap_open_path(%s)", device);
	if (ret == -ENOENT && !strcmp(device, ACCMAP_DEVICE_PATH))
		note("is the accmap module loaded? (modprobe accmap)");
	return EXIT_FAILURE;
}

/* The heap's name into @buf ("" if the heap cannot be queried). */
const char *heap_name(int fd, uint32_t heap, char *buf, size_t len)
{
	struct accmap_heap_info hi;

	buf[0] = '\0';
	if (heap != ACCMAP_HEAP_NONE && !accmap_query_heap(fd, heap, &hi)) {
		hi.name[sizeof(hi.name) - 1] = '\0';
		snprintf(buf, len, "%s", hi.name);
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* Top level */

/**
 * struct command - one subcommand
 * @name: its name on the command line
 * @run: runs it on its own argv (argv[0] is @name); returns the exit status
 * @usage: prints its help
 * @summary: one line for the overview
 */
struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f);
	const char *summary;
};

static const struct command commands[] = {
	{ "heaps", cmd_heaps, heaps_usage,
	  "heaps: size, use, free bytes, largest free block" },
	{ "pool", cmd_pool, pool_usage, "page pool: free lists, cap, hits and misses" },
	{ "list", cmd_list, list_usage, "clients, allocations, orphans, tags from debugfs" },
	{ "svm", cmd_svm, svm_usage,
	  "SVM sessions: mirrored ranges, GPU-mapped bytes, faults" },
	{ "top", cmd_top, top_usage, "live view: memory per process, heap and tag" },
	{ "alloc", cmd_alloc, alloc_usage, "allocate a buffer (and export it, hold it)" },
	{ "info", cmd_info, info_usage, "describe the buffer behind a dma-buf fd" },
	{ "label", cmd_label, label_usage, "name an accounting tag" },
	{ "checkpoint", cmd_checkpoint, checkpoint_usage,
	  "what a CRIU checkpoint of a process would save, or why not" },
	{ "targets", cmd_targets, targets_usage,
	  "replay targets: GPU register windows, models" },
	{ "record", cmd_record, record_usage,
	  "record a compute job on the software Mali model" },
	{ "replay", cmd_replay, replay_usage, "replay a recording with new inputs" },
	{ "show", cmd_show, show_usage, "check and describe a recording file" },
	{ "import-gpureplay", cmd_import_gpureplay, import_usage,
	  "convert a GPUReplay recording of a Mali GPU" },
};

#define NCOMMANDS	ARRAY_SIZE(commands)

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: %s [-d DEVICE] COMMAND [ARGS]\n"
		"       %s COMMAND --help\n"
		"\n"
		"Commands:\n", prog, prog);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"  -d, --device DEVICE  the accmap device (default %s)\n"
		"  -h, --help           this text\n"
		"  -j, --json           one JSON document instead of text (the schema\n"
		"                       is in accmapctl(8))\n"
		"  -V, --version        the version of accmapctl\n"
		"\n"
		"Exit status: 0 success, 1 a call failed, 2 usage error.\n",
		ACCMAP_DEVICE_PATH);
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const struct command *cmd;
	int c, status;

	argv[0] = (char *)prog;	/* for getopt's messages */
	/* '+': stop at the subcommand, its options are its own. */
	while ((c = next_option(argc, argv, "+d:hjV", opts, print_usage, &status)) != OPT_END) {
		switch (c) {
		case OPT_EXIT:
			return status;
		case 'j':
			json_out = true;
			break;
		case 'V':
			printf("%s %s\n", prog, ACCMAP_VERSION);
			return EXIT_SUCCESS;
		}
	}
	if (optind >= argc)
		return usage_error("missing command");

	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 >= argc) {
			print_usage(stdout);
			return EXIT_SUCCESS;
		}
		cmd = find_command(argv[optind + 1]);
		if (!cmd)
			return usage_error("unknown command '%s'", argv[optind + 1]);
		cmd->usage(stdout);
		return EXIT_SUCCESS;
	}

	cmd = find_command(argv[optind]);
	if (!cmd)
		return usage_error("unknown command '%s'", argv[optind]);
	return cmd->run(argc - optind, argv + optind);
}
