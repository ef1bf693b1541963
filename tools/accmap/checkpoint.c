// SPDX-License-Identifier: GPL-2.0
/*
 * accmapctl checkpoint: what a CRIU checkpoint of a process would save.
 */
#include "accmapctl.h"

/* ------------------------------------------------------------------ */
/* accmapctl checkpoint */

void checkpoint_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s checkpoint --pid PID\n"
		"\n"
		"Says what a checkpoint of process PID with CRIU and the accmap plugin\n"
		"(tools/criu) would save, or why it would fail, without changing the\n"
		"process: for every /dev/accmap file it holds, the ids, buffers and\n"
		"replay sessions (ACCMAP_CKPT_OP_STATE); for every accmap dma-buf, its\n"
		"buffer; and the mappings that CRIU cannot restore.  Needs the right to\n"
		"take the process's files (pidfd_getfd) and CAP_CHECKPOINT_RESTORE.\n"
		"\n"
		"  -p, --pid PID  the process\n"
		"  -h, --help     this text\n",
		prog);
}

static const char *ckpt_kind(uint32_t kind)
{
	switch (kind) {
	case ACCMAP_CKPT_KIND_EMPTY:
		return "empty";
	case ACCMAP_CKPT_KIND_ALLOC:
		return "alloc";
	case ACCMAP_CKPT_KIND_FROM_VA:
		return "from-va";
	default:
		return "?";
	}
}

/* One /dev/accmap file of the process: its state, or why it refuses. */
static bool checkpoint_client(int fd, int target_fd, uint64_t *bytes)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_STATE };
	const struct accmap_ckpt_handle *h;
	struct accmap_ckpt_client *st;
	char b[64], f[80];
	const char *p;
	uint32_t i;
	int ret;

	ret = ioctl(fd, ACCMAP_IOC_CHECKPOINT, &arg) ? -errno : 0;
	if (ret == -ENOSPC) {
		st = malloc(arg.size);
		if (!st)
			return fail(-ENOMEM, "state of fd %d", target_fd), false;
		arg.data = (uintptr_t)st;
		ret = ioctl(fd, ACCMAP_IOC_CHECKPOINT, &arg) ? -errno : 0;
	} else {
		st = NULL;
	}
	if (ret) {
		free(st);
		fail(ret, "fd %d: a dump would fail", target_fd);
		if (arg.bad_kind == ACCMAP_CKPT_BAD_SESSION_BUSY)
			note("replay session %u is running, or maps a buffer with no id",
			     arg.bad_id);
		else if (arg.bad_kind == ACCMAP_CKPT_BAD_SESSION_MMIO)
			note("replay session %u drives a register window", arg.bad_id);
		else if (ret == -EPERM)
			note("CAP_CHECKPOINT_RESTORE (or CAP_SYS_ADMIN) is needed");
		return false;
	}
	printf("fd %d: /dev/accmap, opened by pid %u: %u ids, %u replay sessions, next id %u\n",
	       target_fd, st->pid, st->nr_handles, st->nr_sessions, st->next_id);
	printf("  %-6s %-6s %-8s %-10s %-10s %-12s %-5s %s\n", "id", "serial", "kind",
	       "size", "heap", "flags", "tag", "state");
	h = (const void *)(st + 1);
	for (i = 0; i < st->nr_handles; i++) {
		printf("  %-6u %-6llu %-8s %-10s %-10s %-12s %-5u %s%s%s%s%s%s\n", h[i].id,
		       (unsigned long long)h[i].serial, ckpt_kind(h[i].kind),
		       fmt_bytes(b, sizeof(b), h[i].size, false),
		       h[i].heap_name[0] ? h[i].heap_name : "-",
		       h[i].kind == ACCMAP_CKPT_KIND_ALLOC ?
		       fmt_alloc_flags(f, sizeof(f), h[i].flags) : "-", h[i].tag,
		       h[i].state & ACCMAP_CKPT_H_ID_RDONLY ? "ro-id " : "",
		       h[i].state & ACCMAP_CKPT_H_EXPORT_RDONLY ? "export-ro " : "",
		       h[i].state & ACCMAP_CKPT_H_EXPORT_RDWR ? "export-rw " : "",
		       h[i].map_offset ? "mappable " : "",
		       h[i].label[0] ? "label:" : "", h[i].label);
		if (h[i].kind == ACCMAP_CKPT_KIND_ALLOC)
			*bytes += h[i].size;
	}
	p = (const char *)(h + st->nr_handles);
	for (i = 0; i < st->nr_sessions; i++) {
		const struct accmap_ckpt_session *r = (const void *)p;

		printf("  session %u: %u maps%s", r->id, r->nr_maps,
		       r->flags & ACCMAP_REPLAY_SETUP_SVM ? ", SVM" : "");
		if (r->flags & ACCMAP_REPLAY_SETUP_SVM)
			printf(" [%#llx, %#llx), %u attribute ranges",
			       (unsigned long long)r->svm_start,
			       (unsigned long long)(r->svm_start + r->svm_size), r->nr_attrs);
		printf("\n");
		p += sizeof(*r) + r->nr_maps * sizeof(struct accmap_replay_map) +
		     r->nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
	}
	free(st);
	return true;
}

/* The process's mappings CRIU cannot restore: accmap dma-buf files. */
static bool checkpoint_maps(uint32_t pid)
{
	char path[64], line[512];
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return fail(-errno, "open %s", path), false;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dmabuf:"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		printf("mapping of a dma-buf file: %s\n", line);
		ok = false;
	}
	fclose(f);
	if (!ok) {
		note("CRIU cannot restore mappings of dma-buf files");
		note("map accmap buffers through /dev/accmap (ACCMAP_IOC_MAP_OFFSET)");
	}
	return ok;
}

int cmd_checkpoint(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char path[64], link[PATH_MAX], b[64];
	uint64_t bytes = 0;
	uint32_t pid = 0;
	bool ok = true;
	int dev, c, status, n = 0;
	struct dirent *de;
	DIR *dir;

	begin_options(argv);
	while ((c = next_option(argc, argv, "p:h", opts, checkpoint_usage, &status)) != OPT_END) {
		switch (c) {
		case 'p':
			if (!parse_u32(optarg, INT32_MAX, &pid) || !pid)
				return usage_error("bad pid '%s'", optarg);
			break;
		case OPT_EXIT:
			return status;
		}
	}
	if (optind != argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!pid)
		return usage_error("missing --pid PID");
	if (open_device(&dev))
		return EXIT_FAILURE;

	snprintf(path, sizeof(path), "/proc/%u/fd", pid);
	dir = opendir(path);
	if (!dir) {
		accmap_close(dev);
		return fail(-errno, "open %s", path), EXIT_FAILURE;
	}
	while ((de = readdir(dir))) {
		struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_DMABUF };
		char full[PATH_MAX];
		uint32_t tfd;
		ssize_t len;
		int fd;

		if (!parse_u32(de->d_name, INT32_MAX, &tfd))
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		len = readlink(full, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strcmp(link, "/dev/accmap") && strncmp(link, "/dmabuf:", 8))
			continue;
		if (fd_from_process(pid, (int)tfd, &fd)) {
			ok = false;
			continue;
		}
		n++;
		if (!strcmp(link, "/dev/accmap")) {
			ok &= checkpoint_client(fd, (int)tfd, &bytes);
		} else {
			arg.fd = fd;
			if (ioctl(dev, ACCMAP_IOC_CHECKPOINT, &arg)) {
				printf("fd %u: a dma-buf of another exporter: a dump would fail\n",
				       tfd);
				ok = false;
			} else {
				printf("fd %u: dma-buf (%s) of buffer serial %llu, %s\n", tfd,
				       arg.dmabuf_mode == O_RDWR ? "read-write" : "read-only",
				       (unsigned long long)arg.serial,
				       fmt_bytes(b, sizeof(b), arg.dmabuf_size, false));
			}
		}
		close(fd);
	}
	closedir(dir);
	accmap_close(dev);
	ok &= checkpoint_maps(pid);
	if (!n)
		printf("pid %u holds no accmap file\n", pid);
	printf("%s; buffer contents to save: at most %s (shared buffers once)\n",
	       ok ? "a dump would succeed" : "a dump would fail",
	       fmt_bytes(b, sizeof(b), bytes, false));
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
