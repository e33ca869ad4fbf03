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

/* The strings of JSON array @a, borrowed, in *@ret (malloc'd). */
static int args_of(json_t *a, const char ***ret, size_t *n)
{
	size_t i;
	json_t *v;

	*n = json_array_size(a);
	*ret = calloc(*n + 1, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	json_array_foreach(a, i, v)
	{
		(*ret)[i] = json_string_value(v);
		if (!(*ret)[i])
			return -EINVAL;
	}
	return 0;
}

/* Runs request @req; the reply object in *@out. */
static int run_request(struct jf_layer *l, json_t *req, jf_layer_safe_fn safe, void *safe_data,
		       json_t **out, bool *changed)
{
	const char *cmd = json_string_value(json_object_get(req, "cmd"));
	_cleanup_free_ const char **args = NULL;
	_cleanup_free_ char *id = NULL;
	void *rep = NULL;
	size_t n = 0;
	int r = cmd ? args_of(json_object_get(req, "args"), &args, &n) : -EINVAL;

	if (r < 0)
		return r;
	if (!strcmp(cmd, "checkpoint") && n <= 1) {
		r = jf_layer_checkpoint(l, n ? args[0] : NULL, &id);
		*out = r < 0 ? NULL : json_pack("{sb ss}", "ok", 1, "id", id);
		return r;
	}
	if (!strcmp(cmd, "restore") && n == 1)
		r = jf_layer_restore(l, args[0]);
	else if (!strcmp(cmd, "apply"))
		r = jf_layer_apply(l, args, n, json_is_true(json_object_get(req, "force")), safe,
				   safe_data, &rep);
	else if (!strcmp(cmd, "discard"))
		r = jf_layer_discard(l, args, n, &rep);
	else
		return -EINVAL;
	*changed = true; /* even a failed restore may have replayed some of it */
	if (r < 0)
		return r;
	*out = rep ? json_pack("{sb so}", "ok", 1, "report", (json_t *)rep)
		   : json_pack("{sb}", "ok", 1);
	return 0;
}

int jf_layer_handle_request(struct jf_layer *l, const char *line, jf_layer_safe_fn safe,
			    void *safe_data, char **ret_reply, bool *ret_changed)
{
	json_t *req = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL), *out = NULL;
	char *s;
	int r;

	*ret_changed = false;
	r = json_is_object(req) ? run_request(l, req, safe, safe_data, &out, ret_changed) : -EINVAL;
	json_decref(req);
	if (r < 0 || !out) {
		json_decref(out);
		out = json_pack("{sb ss}", "ok", 0, "error",
				r == -EINVAL ? "bad request" : strerror(r < 0 ? -r : ENOMEM));
	}
	s = out ? json_dumps(out, JSON_COMPACT) : NULL;
	json_decref(out);
	if (!s || asprintf(ret_reply, "%s\n", s) < 0) {
		free(s);
		return -ENOMEM;
	}
	free(s);
	return 0;
}
