/* SPDX-License-Identifier: MIT */
/*
 * The review commands' end of DIR/control: while the daemon holds
 * DIR/lock, checkpoint, restore, apply and discard are its to run (it
 * remounts its overlay after), so a command sends one JSON line and prints
 * the one it gets back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cleanup.h"
#include "layer-internal.h"

#define REPLY_MAX (16u << 20)

int jf_layer_request(struct jf_layer *l, const char *cmd, const char *const *args, size_t n,
		     bool force, void **ret_reply)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	json_t *req = json_pack("{ss s[] sb}", "cmd", cmd, "args", "force", force), *reply;
	_cleanup_free_ char *line = NULL, *buf = NULL;
	size_t len = 0;
	int r = 0;

	for (size_t i = 0; req && i < n; i++)
		json_array_append_new(json_object_get(req, "args"), json_string(args[i]));
	buf = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (buf && asprintf(&line, "%s\n", buf) < 0)
		line = NULL;
	free(buf);
	buf = malloc(REPLY_MAX + 1);
	if (!line || !buf)
		return -ENOMEM;
	if (s < 0)
		return -errno;
	/* by DIR's fd: a long DIR does not fit in sun_path */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/control", l->dirfd);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	if (write(s, line, strlen(line)) != (ssize_t)strlen(line)) /* one line, one write */
		return -errno;
	shutdown(s, SHUT_WR);
	while (len < REPLY_MAX) {
		ssize_t got = read(s, buf + len, REPLY_MAX - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		len += (size_t)got;
		if (memchr(buf + len - got, '\n', (size_t)got))
			break;
	}
	buf[len] = '\0';
	reply = json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
	if (!json_is_object(reply)) {
		json_decref(reply);
		return -EPROTO;
	}
	*ret_reply = reply;
	return r;
}
