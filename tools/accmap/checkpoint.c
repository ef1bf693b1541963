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

/* The buffers of a client's state, a row each; adds their bytes to @bytes. */
static void checkpoint_handles(struct out *o, const struct accmap_ckpt_handle *h, uint32_t n,
			       uint64_t *bytes)
{
	static const char *const heads[] = {
		"  ID", "SERIAL", "KIND", "SIZE", "HEAP", "FLAGS", "TAG", "STATE",
	};
	static const struct { uint32_t bit; const char *name; } states[] = {
		{ ACCMAP_CKPT_H_ID_RDONLY, "ro-id" },
		{ ACCMAP_CKPT_H_EXPORT_RDONLY, "export-ro" },
		{ ACCMAP_CKPT_H_EXPORT_RDWR, "export-rw" },
	};
	struct json *j = out_json(o);
	char b[64], f[80], st[128];
	uint32_t i;
	size_t k, used;

	out_list_begin(o, "buffers", heads, ARRAY_SIZE(heads), 0x43);
	for (i = 0; i < n; i++) {
		bool alloc = h[i].kind == ACCMAP_CKPT_KIND_ALLOC;

		out_row_begin(o);
		out_u64f(o, "id", h[i].id, "  %u", h[i].id);
		out_u64(o, "serial", h[i].serial);
		out_str(o, "kind", ckpt_kind(h[i].kind));
		out_u64f(o, "size", h[i].size, "%s", fmt_bytes(b, sizeof(b), h[i].size, false));
		if (h[i].heap_name[0])
			out_str(o, "heap", h[i].heap_name);
		else
			out_null(o, "heap", NULL);
		if (alloc)
			out_u64f(o, "flags", h[i].flags, "%s",
				 fmt_alloc_flags(f, sizeof(f), h[i].flags));
		else
			out_null(o, "flags", NULL);
		out_u64(o, "tag", h[i].tag);
		used = 0;
		st[0] = '\0';
		if (j)
			json_begin_array(j, "state");
		for (k = 0; k < ARRAY_SIZE(states); k++) {
			if (!(h[i].state & states[k].bit))
				continue;
			if (j)
				json_string(j, NULL, states[k].name);
			used += snprintf(st + used, sizeof(st) - used, "%s ", states[k].name);
		}
		if (j)
			json_end_array(j);
		if (j)
			json_bool(j, "mappable", h[i].map_offset);
		out_textf(o, NULL, "%s%s%s%s", st, h[i].map_offset ? "mappable " : "",
			  h[i].label[0] ? "label:" : "", h[i].label);
		if (j && h[i].label[0])
			json_string(j, "label", h[i].label);
		else if (j)
			json_null(j, "label");
		out_row_end(o);
		if (alloc)
			*bytes += h[i].size;
	}
	out_list_end(o, NULL);
}

/* The replay sessions of a client's state, a line each, from @p. */
static void checkpoint_sessions(struct out *o, const char *p, uint32_t n)
{
	struct json *j = out_json(o);
	uint32_t i;

	if (j)
		json_begin_array(j, "replay_sessions");
	for (i = 0; i < n; i++) {
		const struct accmap_ckpt_session *r = (const void *)p;
		bool svm = r->flags & ACCMAP_REPLAY_SETUP_SVM;

		if (j) {
			json_begin_object(j, NULL);
			json_u64(j, "id", r->id);
			json_u64(j, "maps", r->nr_maps);
			json_bool(j, "svm", svm);
			if (svm) {
				json_u64(j, "svm_start", r->svm_start);
				json_u64(j, "svm_size", r->svm_size);
				json_u64(j, "attribute_ranges", r->nr_attrs);
			}
			json_end_object(j);
		} else if (svm) {
			printf("  session %u: %u maps, SVM [%#llx, %#llx), %u attribute ranges\n",
			       r->id, r->nr_maps, (unsigned long long)r->svm_start,
			       (unsigned long long)(r->svm_start + r->svm_size), r->nr_attrs);
		} else {
			printf("  session %u: %u maps\n", r->id, r->nr_maps);
		}
		p += sizeof(*r) + r->nr_maps * sizeof(struct accmap_replay_map) +
		     r->nr_attrs * sizeof(struct accmap_ckpt_svm_attr);
	}
	if (j)
		json_end_array(j);
}

/*
 * One /dev/accmap file of the process: its state, or why it refuses
 * (JSON: members of the file's object).
 */
static bool checkpoint_client(struct out *o, int fd, int target_fd, uint64_t *bytes)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_STATE };
	struct json *j = out_json(o);
	struct accmap_ckpt_client *st;
	const struct accmap_ckpt_handle *h;
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
		if (j) {
			json_bool(j, "ok", false);
			json_string(j, "error", strerror(-ret));
		}
		return false;
	}
	out_line(o, "fd %d: /dev/accmap, opened by pid %u: %u ids, %u replay sessions, next id %u",
		 target_fd, st->pid, st->nr_handles, st->nr_sessions, st->next_id);
	if (j) {
		json_bool(j, "ok", true);
		json_u64(j, "opened_by", st->pid);
		json_u64(j, "next_id", st->next_id);
	}
	h = (const void *)(st + 1);
	checkpoint_handles(o, h, st->nr_handles, bytes);
	checkpoint_sessions(o, (const char *)(h + st->nr_handles), st->nr_sessions);
	free(st);
	return true;
}

/* The process's mappings CRIU cannot restore: accmap dma-buf files. */
static bool checkpoint_maps(struct out *o, uint32_t pid)
{
	struct json *j = out_json(o);
	char path[64], line[512];
	bool ok = true;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return fail(-errno, "open %s", path), false;
	if (j)
		json_begin_array(j, "dmabuf_mappings");
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dmabuf:"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		out_line(o, "mapping of a dma-buf file: %s", line);
		if (j)
			json_string(j, NULL, line);
		ok = false;
	}
	if (j)
		json_end_array(j);
	fclose(f);
	if (!ok) {
		note("CRIU cannot restore mappings of dma-buf files");
		note("map accmap buffers through /dev/accmap (ACCMAP_IOC_MAP_OFFSET)");
	}
	return ok;
}

/* One dma-buf file of the process: which accmap buffer, or none. */
static bool checkpoint_dmabuf(struct out *o, int dev, int fd, uint32_t tfd)
{
	struct accmap_ckpt arg = { .op = ACCMAP_CKPT_OP_DMABUF, .fd = fd };
	struct json *j = out_json(o);
	const char *mode;
	char b[64];

	if (ioctl(dev, ACCMAP_IOC_CHECKPOINT, &arg)) {
		out_line(o, "fd %u: a dma-buf of another exporter: a dump would fail", tfd);
		if (j) {
			json_bool(j, "ok", false);
			json_string(j, "error", "a dma-buf of another exporter");
		}
		return false;
	}
	mode = arg.dmabuf_mode == O_RDWR ? "read-write" : "read-only";
	out_line(o, "fd %u: dma-buf (%s) of buffer serial %llu, %s", tfd, mode,
		 (unsigned long long)arg.serial, fmt_bytes(b, sizeof(b), arg.dmabuf_size, false));
	if (j) {
		json_bool(j, "ok", true);
		json_string(j, "mode", mode);
		json_u64(j, "serial", arg.serial);
		json_u64(j, "size", arg.dmabuf_size);
	}
	return true;
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
	struct json *j;
	struct out o;
	DIR *dir;

	begin_options(argv);
	while ((c = next_option(argc, argv, "p:h", opts, checkpoint_usage, &status)) != OPT_END) {
		switch (c) {
		case 'p':
			if (pid_option(optarg, &pid))
				return EXIT_USAGE;
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
	out_init(&o, json_out, false);
	j = out_json(&o);
	if (j) {
		json_u64(j, "pid", pid);
		json_begin_array(j, "files");
	}
	while ((de = readdir(dir))) {
		char full[PATH_MAX];
		bool client;
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
		client = !strcmp(link, "/dev/accmap");
		if (!client && strncmp(link, "/dmabuf:", 8))
			continue;
		if (fd_from_process(pid, (int)tfd, &fd)) {
			ok = false;
			continue;
		}
		n++;
		if (j) {
			json_begin_object(j, NULL);
			json_u64(j, "fd", tfd);
			json_string(j, "type", client ? "accmap" : "dmabuf");
		}
		if (client)
			ok &= checkpoint_client(&o, fd, (int)tfd, &bytes);
		else
			ok &= checkpoint_dmabuf(&o, dev, fd, tfd);
		if (j)
			json_end_object(j);
		close(fd);
	}
	if (j)
		json_end_array(j);
	closedir(dir);
	accmap_close(dev);
	ok &= checkpoint_maps(&o, pid);
	if (!n)
		out_line(&o, "pid %u holds no accmap file", pid);
	out_line(&o, "%s; buffer contents to save: at most %s (shared buffers once)",
		 ok ? "a dump would succeed" : "a dump would fail",
		 fmt_bytes(b, sizeof(b), bytes, false));
	if (j) {
		json_bool(j, "dump_ok", ok);
		json_u64(j, "bytes", bytes);
	}
	/* The answer, even "a dump would fail", is printed; that one exits 1. */
	out_finish(&o);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
