// SPDX-License-Identifier: GPL-2.0
/*
 * accmap_devwatch PATH CMD [ARG...]: runs CMD and tells whether PATH was
 * created while it ran.  The VM's /init runs every module load that must
 * fail under it: a load that fails must never have shown /dev/accmap, or
 * user space could open the device of a module that is going away.
 *
 * Prints "created PATH" if an inotify IN_CREATE for PATH's name arrived
 * in PATH's directory while CMD ran; exits with CMD's status (127 if it
 * could not be run, 126 if the watch could not be set up).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[PATH_MAX], dir[PATH_MAX], name[NAME_MAX + 1];
	union {
		struct inotify_event ev;
		char bytes[4096];
	} buf;
	int fd, status, created = 0;
	ssize_t n;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PATH CMD [ARG...]\n", argv[0]);
		return 126;
	}
	snprintf(path, sizeof(path), "%s", argv[1]);
	snprintf(dir, sizeof(dir), "%s", dirname(path));
	snprintf(path, sizeof(path), "%s", argv[1]);
	snprintf(name, sizeof(name), "%s", basename(path));

	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 || inotify_add_watch(fd, dir, IN_CREATE) < 0) {
		perror("inotify");
		return 126;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 126;
	}
	if (!pid) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror("waitpid");
			return 126;
		}
	}
	/* Every event of the command's lifetime is queued by now. */
	while ((n = read(fd, buf.bytes, sizeof(buf))) > 0) {
		for (char *p = buf.bytes; p < buf.bytes + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->len && !strcmp(ev->name, name))
				created = 1;
			p += sizeof(*ev) + ev->len;
		}
	}
	if (created)
		printf("created %s\n", argv[1]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
