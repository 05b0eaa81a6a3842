/* Stand-in for NIXL's C API (libnixl_capi.so, the wrapper under NIXL's Rust
 * bindings), rdmabench's own: the calls the NIXL probe's native initiator
 * makes, moving real bytes over TCP, in _api.py's frames, to the stand-in
 * Python agent (nixl/_api.py) as its target, so that CI can run the native
 * initiator without a GPU or NIXL. An initiator only; one caller thread; never
 * a measurement of NIXL. Build: gcc -O2 -Wall -shared -fPIC -o libnixl_capi.so nixl_capi.c */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* These types mirror NIXL's src/bindings/rust/wrapper.h (keep their values
 * and layout as there); the structs behind the handles are ours. */
typedef enum {
	NIXL_CAPI_SUCCESS = 0, NIXL_CAPI_ERROR_INVALID_PARAM = -1, NIXL_CAPI_ERROR_BACKEND = -2,
	NIXL_CAPI_ERROR_INVALID_STATE = -3, NIXL_CAPI_ERROR_EXCEPTION = -4, NIXL_CAPI_IN_PROG = 1,
	NIXL_CAPI_ERROR_NO_TELEMETRY = -5, NIXL_CAPI_ERROR_NOT_FOUND = -6,
} nixl_capi_status_t;
typedef enum {
	NIXL_CAPI_MEM_DRAM = 0, NIXL_CAPI_MEM_VRAM = 1, NIXL_CAPI_MEM_BLOCK = 2,
	NIXL_CAPI_MEM_OBJECT = 3, NIXL_CAPI_MEM_FILE = 4, NIXL_CAPI_MEM_UNKNOWN = 5
} nixl_capi_mem_type_t;
typedef enum {
	NIXL_CAPI_THREAD_SYNC_NONE = 0, NIXL_CAPI_THREAD_SYNC_STRICT = 1, NIXL_CAPI_THREAD_SYNC_RW = 2,
	NIXL_CAPI_THREAD_SYNC_DEFAULT = NIXL_CAPI_THREAD_SYNC_NONE,
} nixl_capi_thread_sync_t;
typedef struct nixl_capi_agent_config_s {
	bool enable_prog_thread, enable_listen_thread;
	int listen_port;
	nixl_capi_thread_sync_t thread_sync;
	unsigned int num_workers;
	uint64_t pthr_delay_us, lthr_delay_us;
	bool capture_telemetry;
} nixl_capi_agent_config_t;
typedef enum { NIXL_CAPI_XFER_OP_READ = 0, NIXL_CAPI_XFER_OP_WRITE = 1 } nixl_capi_xfer_op_t;
typedef struct nixl_capi_agent_s *nixl_capi_agent_t;
typedef struct nixl_capi_params_s *nixl_capi_params_t;
typedef struct nixl_capi_string_list_s *nixl_capi_string_list_t;
typedef struct nixl_capi_backend_s *nixl_capi_backend_t;
typedef struct nixl_capi_opt_args_s *nixl_capi_opt_args_t;
typedef struct nixl_capi_xfer_dlist_s *nixl_capi_xfer_dlist_t;
typedef struct nixl_capi_xfer_dlist_handle_s *nixl_capi_xfer_dlist_handle_t;
typedef struct nixl_capi_reg_dlist_s *nixl_capi_reg_dlist_t;
typedef struct nixl_capi_xfer_req_s *nixl_capi_xfer_req_t;

#define OK NIXL_CAPI_SUCCESS
#define INVAL NIXL_CAPI_ERROR_INVALID_PARAM
#define NOT_FOUND NIXL_CAPI_ERROR_NOT_FOUND

struct desc { uintptr_t addr; size_t len; };
struct descs { struct desc *d; size_t n, cap; };
struct peer { struct peer *next; char *name, *host; int port, fd; };
struct nixl_capi_agent_s { char *name; bool ucx; struct descs regs; struct peer *peers; };
struct nixl_capi_string_list_s { size_t n; const char *s[1]; };
struct nixl_capi_params_s { size_t n; char **k, **v; }; /* sorted by key, as NIXL's std::map */
struct nixl_capi_backend_s { nixl_capi_agent_t agent; };
struct nixl_capi_opt_args_s { char *msg; size_t len; bool has_notif; };
struct nixl_capi_reg_dlist_s { nixl_capi_mem_type_t type; struct descs l; };
struct nixl_capi_xfer_dlist_s { nixl_capi_mem_type_t type; struct descs l; };
struct nixl_capi_xfer_dlist_handle_s { char *agent; struct descs l; }; /* agent "": local */
struct nixl_capi_xfer_req_s { /* live until nixl_capi_release_xfer_req; done: IN_PROG till a poll ends it */
	bool live, posted, has_notif;
	nixl_capi_xfer_op_t op;
	struct descs local, remote;
	char *agent, *msg;
	size_t len;
	unsigned polls;
	nixl_capi_status_t done;
};

static unsigned long posts; /* said at exit, for tests that the calls were timed */

__attribute__((destructor)) static void say_posts(void) {
	if (posts) fprintf(stderr, "# stand-in: %lu nixl_capi_post_xfer_req calls\n", posts);
}

/* A line on stderr for a failure, which the status alone would not explain. */
static nixl_capi_status_t say(nixl_capi_status_t st, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("stand-in: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return st;
}

/* A stand-in for CI: running out of memory is not a case worth a status. */
static void *xrealloc(void *p, size_t n) {
	if (!(p = realloc(p, n ? n : 1))) fputs("stand-in: out of memory\n", stderr), abort();
	return p;
}
static void *xcalloc(size_t n) { return memset(xrealloc(NULL, n), 0, n); }
static char *xstrdup(const char *s) { return strcpy(xrealloc(NULL, strlen(s) + 1), s); }
static void *xmemdup(const void *p, size_t n) { return n ? memcpy(xrealloc(NULL, n), p, n) : NULL; }

static void dpush(struct descs *l, uintptr_t addr, size_t len) {
	if (l->n == l->cap) l->d = xrealloc(l->d, (l->cap = l->cap ? 2 * l->cap : 8) * sizeof *l->d);
	l->d[l->n++] = (struct desc){addr, len};
}

struct buf { char *p; size_t n, cap; };
static void bprintf(struct buf *b, const char *fmt, ...) {
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(b->p ? b->p + b->n : NULL, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (k < 0) return;
		if (b->n + (size_t)k < b->cap) { b->n += k; return; }
		b->p = xrealloc(b->p, b->cap = 2 * (b->n + k + 64));
	}
}
/* A JSON string, as Python's json reads it back. */
static void bjson(struct buf *b, const char *s) {
	bprintf(b, "\"");
	for (unsigned char c; (c = *s); s++) bprintf(b, c == '"' || c == '\\' ? "\\%c" : c < 0x20 ? "\\u%04x" : "%c", c);
	bprintf(b, "\"");
}

/* --- a target's metadata: Python's json.dumps({"name": ..., "addr": [host, port]}) --- */

static const char *blank(const char *s) { return s + strspn(s, " \t\r\n"); }
static long hex4(const char *p) {
	unsigned v;
	int k = 0;
	return sscanf(p, "%4x%n", &v, &k) == 1 && k == 4 ? (long)v : -1;
}
/* The JSON string at *s, unescaped (json.dumps writes \uXXXX for all but ASCII). */
static char *jstr(const char **s) {
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p = blank(*s);
	struct buf b = {0};
	if (*p++ != '"') return NULL;
	bprintf(&b, "%s", "");
	for (; *p && *p != '"'; p++) {
		if (*p != '\\') { bprintf(&b, "%c", *p); continue; }
		const char *esc = *++p ? strchr(from, *p) : NULL;
		if (esc) { bprintf(&b, "%c", to[esc - from]); continue; }
		long cp = *p == 'u' ? hex4(p + 1) : -1, lo;
		if (cp < 0) break;
		p += 4;
		if (cp >= 0xD800 && cp < 0xDC00 && p[1] == '\\' && p[2] == 'u' && (lo = hex4(p + 3)) >= 0xDC00 && lo < 0xE000)
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00), p += 6;
		int more = cp < 0x80 ? 0 : cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3; /* UTF-8's continuation bytes */
		bprintf(&b, "%c", (int)(more ? (0xFF << (7 - more) & 0xFF) | cp >> 6 * more : cp));
		while (more--) bprintf(&b, "%c", (int)(0x80 | (cp >> 6 * more & 0x3F)));
	}
	if (*p != '"') { free(b.p); return NULL; }
	*s = p + 1;
	return b.p;
}
static int parse_md(const char *s, char **name, char **host, int *port) {
	char *key = NULL, *e;
	if (*(s = blank(s)) != '{') return -1;
	for (s++;; s++) {
		if (!(key = jstr(&s)) || *(s = blank(s)) != ':') break;
		s++;
		if (!strcmp(key, "name") && !*name) {
			if (!(*name = jstr(&s))) break;
		} else if (!strcmp(key, "addr") && !*host) {
			if (*(s = blank(s)) != '[') break;
			s++;
			if (!(*host = jstr(&s)) || *(s = blank(s)) != ',') break;
			*port = (int)strtol(s + 1, &e, 10);
			if (e == s + 1 || *(s = blank(e)) != ']') break;
			s++;
		} else break; /* the stand-in's agents say nothing else */
		free(key), key = NULL;
		if (*(s = blank(s)) == '}') return *name && *host ? 0 : -1;
		if (*s != ',') break;
	}
	free(key);
	return -1;
}

/* --- the wire --- */

static void be64(unsigned char *b, uint64_t v) { for (int i = 7; i >= 0; i--, v >>= 8) b[i] = (unsigned char)v; }
static uint64_t unbe64(const unsigned char *b) { uint64_t v = 0; for (int i = 0; i < 8; i++) v = v << 8 | b[i]; return v; }

/* All n bytes sent, or received (in); a peer that went away is ECONNRESET. */
static int io_all(int fd, void *p, size_t n, bool in) {
	for (char *c = p; n > 0;) {
		ssize_t k = in ? recv(fd, c, n, 0) : send(fd, c, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR) continue;
		if (k == 0) errno = ECONNRESET;
		if (k <= 0) return -1;
		c += k, n -= (size_t)k;
	}
	return 0;
}
/* Every socket error: said on stderr, the connection dropped. */
static nixl_capi_status_t io_failed(struct peer *p, const char *what) {
	say(0, "%s (agent %s at %s:%d) failed: %s", what, p->name, p->host, p->port, strerror(errno));
	if (p->fd >= 0) close(p->fd);
	p->fd = -1;
	return NIXL_CAPI_ERROR_BACKEND;
}
static nixl_capi_status_t connect_peer(struct peer *p) {
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
	struct timeval tv = {60, 0}; /* as the Python agent's create_connection(timeout=60) */
	char port[16];
	int err, one = 1;
	if (p->fd >= 0) return OK;
	snprintf(port, sizeof port, "%d", p->port);
	if ((err = getaddrinfo(p->host, port, &hints, &res)))
		return say(NIXL_CAPI_ERROR_BACKEND, "cannot resolve %s: %s", p->host, gai_strerror(err));
	for (ai = res; ai && p->fd < 0; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) { err = errno; continue; }
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) { p->fd = fd; continue; }
		err = errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (p->fd < 0) return errno = err, io_failed(p, "connecting");
	setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(p->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	return OK;
}
static uint64_t total(const struct descs *l) {
	uint64_t n = 0;
	for (size_t i = 0; i < l->n; i++) n += l->d[i].len;
	return n;
}
/* One exchange with a peer, whole: a frame of the header (which it frees) and
 * out's bytes; then the reply, of the kind, whose bytes land in in's descs. */
static nixl_capi_status_t exchange(struct peer *p, struct buf *h, const struct descs *out, const char *kind,
				   const struct descs *in, const char *what) {
	nixl_capi_status_t st = connect_peer(p);
	uint64_t n = h->n;
	unsigned char *f = xrealloc(NULL, n + 16), b[8];
	be64(f, n), memcpy(f + 8, h->p, n), be64(f + 8 + n, total(out));
	int bad = st || io_all(p->fd, f, n + 16, false); /* the lengths and header in one segment */
	free(f), free(h->p);
	if (st) return st;
	for (size_t i = 0; !bad && i < out->n; i++) bad = io_all(p->fd, (void *)out->d[i].addr, out->d[i].len, false);
	if (bad || io_all(p->fd, b, 8, true)) return io_failed(p, what);
	if ((n = unbe64(b)) > 1 << 20) return errno = EPROTO, io_failed(p, what);
	char *reply = xcalloc(n + 1);
	bad = io_all(p->fd, reply, n, true) || io_all(p->fd, b, 8, true);
	if (!bad && (!strstr(reply, kind) || unbe64(b) != total(in))) bad = 1, errno = EPROTO;
	free(reply);
	for (size_t i = 0; !bad && i < in->n; i++) bad = io_all(p->fd, (void *)in->d[i].addr, in->d[i].len, true);
	return bad ? io_failed(p, what) : OK;
}
static const struct descs none;
static nixl_capi_status_t send_notif(nixl_capi_agent_t a, struct peer *p, const void *msg, size_t len) {
	struct buf h = {0};
	struct desc d = {(uintptr_t)msg, len};
	bprintf(&h, "{\"kind\":\"NOTIF\",\"from\":");
	bjson(&h, a->name);
	bprintf(&h, "}");
	return exchange(p, &h, &(struct descs){&d, 1, 1}, "\"OK\"", &none, "a notification");
}
/* A READ's reply lands in the local descs in order; a WRITE sends theirs. */
static nixl_capi_status_t transfer(struct peer *p, struct nixl_capi_xfer_req_s *r) {
	struct buf h = {0};
	bool rd = r->op == NIXL_CAPI_XFER_OP_READ;
	bprintf(&h, "{\"kind\":\"%s\",\"descs\":[", rd ? "READ" : "WRITE");
	for (size_t i = 0; i < r->remote.n; i++)
		bprintf(&h, "%s[%ju,%zu]", i ? "," : "", (uintmax_t)r->remote.d[i].addr, r->remote.d[i].len);
	bprintf(&h, "]}");
	return rd ? exchange(p, &h, &none, "\"DATA\"", &r->local, "a READ") : exchange(p, &h, &r->local, "\"OK\"", &none, "a WRITE");
}
static struct peer **find_peer(nixl_capi_agent_t a, const char *name) {
	struct peer **p = &a->peers;
	while (*p && strcmp((*p)->name, name)) p = &(*p)->next;
	return p;
}
static void drop_peer(struct peer **pp) {
	struct peer *p = *pp;
	*pp = p->next;
	if (p->fd >= 0) close(p->fd);
	free(p->name), free(p->host), free(p);
}

/* --- agents, plugins, backends, options, lists, metadata --- */

#define NEW(out) (*(out) = xcalloc(sizeof **(out))) /* a handle the caller destroys */

nixl_capi_status_t nixl_capi_create_agent(const char *name, nixl_capi_agent_t *agent) {
	return name && agent ? (NEW(agent)->name = xstrdup(name), OK) : INVAL;
}
nixl_capi_status_t nixl_capi_create_configured_agent(const char *name, const nixl_capi_agent_config_t *cfg,
						     nixl_capi_agent_t *agent) {
	return cfg ? nixl_capi_create_agent(name, agent) : INVAL;
}
nixl_capi_status_t nixl_capi_destroy_agent(nixl_capi_agent_t a) {
	/* Said here too: a Go program that loads this library without cgo never runs its destructors. */
	say_posts();
	posts = 0;
	if (!a) return INVAL;
	while (a->peers) drop_peer(&a->peers);
	free(a->regs.d), free(a->name), free(a);
	return OK;
}
nixl_capi_status_t nixl_capi_get_available_plugins(nixl_capi_agent_t a, nixl_capi_string_list_t *l) {
	return a && l ? (*NEW(l) = (struct nixl_capi_string_list_s){1, {"UCX"}}, OK) : INVAL;
}
nixl_capi_status_t nixl_capi_string_list_size(nixl_capi_string_list_t l, size_t *n) { return l && n ? (*n = l->n, OK) : INVAL; }
nixl_capi_status_t nixl_capi_string_list_get(nixl_capi_string_list_t l, size_t i, const char **s) {
	return l && s && i < l->n ? (*s = l->s[i], OK) : INVAL;
}
nixl_capi_status_t nixl_capi_destroy_string_list(nixl_capi_string_list_t l) { return l ? (free(l), OK) : INVAL; }
nixl_capi_status_t nixl_capi_create_params(nixl_capi_params_t *p) { return p ? (NEW(p), OK) : INVAL; }
nixl_capi_status_t nixl_capi_params_add(nixl_capi_params_t p, const char *key, const char *value) {
	size_t i = 0;
	if (!p || !key || !value) return INVAL;
	while (i < p->n && strcmp(p->k[i], key) < 0) i++;
	if (i < p->n && !strcmp(p->k[i], key)) return free(p->v[i]), p->v[i] = xstrdup(value), OK; /* as a map */
	p->k = xrealloc(p->k, (p->n + 1) * sizeof *p->k);
	p->v = xrealloc(p->v, (p->n + 1) * sizeof *p->v);
	memmove(p->k + i + 1, p->k + i, (p->n - i) * sizeof *p->k);
	memmove(p->v + i + 1, p->v + i, (p->n - i) * sizeof *p->v);
	p->k[i] = xstrdup(key), p->v[i] = xstrdup(value), p->n++;
	return OK;
}
nixl_capi_status_t nixl_capi_destroy_params(nixl_capi_params_t p) {
	if (!p) return INVAL;
	for (size_t i = 0; i < p->n; i++) free(p->k[i]), free(p->v[i]);
	free(p->k), free(p->v), free(p);
	return OK;
}
nixl_capi_status_t nixl_capi_create_backend(nixl_capi_agent_t a, const char *plugin, nixl_capi_params_t p,
					    nixl_capi_backend_t *backend) {
	if (!a || !plugin || !p || !backend) return INVAL;
	if (strcmp(plugin, "UCX")) return say(INVAL, "no %s plugin", plugin);
	if (a->ucx) return say(INVAL, "backend UCX already created");
	a->ucx = true;
	/* Said for tests, as _api.py says it: the parameters the probe made the backend with. */
	printf("# stand-in: UCX created with ");
	for (size_t i = 0; i < p->n; i++) printf("%s%s=%s", i ? "," : "", p->k[i], p->v[i]);
	printf("\n");
	fflush(stdout);
	NEW(backend)->agent = a;
	return OK;
}
/* As NIXL's wrapper: frees the handle; the agent keeps its backend. */
nixl_capi_status_t nixl_capi_destroy_backend(nixl_capi_backend_t b) { return b ? (free(b), OK) : INVAL; }
nixl_capi_status_t nixl_capi_create_opt_args(nixl_capi_opt_args_t *o) { return o ? (NEW(o), OK) : INVAL; }
nixl_capi_status_t nixl_capi_destroy_opt_args(nixl_capi_opt_args_t o) { return o ? (free(o->msg), free(o), OK) : INVAL; }
/* One backend: nothing to choose. */
nixl_capi_status_t nixl_capi_opt_args_add_backend(nixl_capi_opt_args_t o, nixl_capi_backend_t b) { return o && b ? OK : INVAL; }
nixl_capi_status_t nixl_capi_opt_args_set_notif_msg(nixl_capi_opt_args_t o, const void *data, size_t len) {
	if (!o || (!data && len)) return INVAL;
	free(o->msg);
	o->msg = xmemdup(data, len), o->len = len;
	return OK;
}
nixl_capi_status_t nixl_capi_opt_args_set_has_notif(nixl_capi_opt_args_t o, bool has) { return o ? (o->has_notif = has, OK) : INVAL; }

nixl_capi_status_t nixl_capi_create_reg_dlist(nixl_capi_mem_type_t t, nixl_capi_reg_dlist_t *l) { return l ? (NEW(l)->type = t, OK) : INVAL; }
nixl_capi_status_t nixl_capi_reg_dlist_add_desc(nixl_capi_reg_dlist_t l, uintptr_t addr, size_t len, uint64_t dev_id,
						const void *md, size_t md_len) {
	(void)dev_id, (void)md, (void)md_len;
	return l ? (dpush(&l->l, addr, len), OK) : INVAL;
}
nixl_capi_status_t nixl_capi_destroy_reg_dlist(nixl_capi_reg_dlist_t l) { return l ? (free(l->l.d), free(l), OK) : INVAL; }
nixl_capi_status_t nixl_capi_register_mem(nixl_capi_agent_t a, nixl_capi_reg_dlist_t l, nixl_capi_opt_args_t o) {
	static const char *names[] = {"DRAM", "VRAM", "BLOCK", "OBJECT", "FILE", "UNKNOWN"};
	(void)o;
	if (!a || !l) return INVAL;
	if (l->type != NIXL_CAPI_MEM_DRAM)
		return say(INVAL, "%s is not supported (DRAM only)", (unsigned)l->type < 6 ? names[l->type] : "UNKNOWN");
	for (size_t i = 0; i < l->l.n; i++) dpush(&a->regs, l->l.d[i].addr, l->l.d[i].len);
	return OK;
}
nixl_capi_status_t nixl_capi_deregister_mem(nixl_capi_agent_t a, nixl_capi_reg_dlist_t l, nixl_capi_opt_args_t o) {
	(void)o;
	if (!a || !l) return INVAL;
	for (size_t i = 0; i < l->l.n; i++)
		for (size_t j = 0; j < a->regs.n; j++)
			if (a->regs.d[j].addr == l->l.d[i].addr && a->regs.d[j].len == l->l.d[i].len) {
				a->regs.d[j] = a->regs.d[--a->regs.n];
				break;
			}
	return OK;
}
nixl_capi_status_t nixl_capi_create_xfer_dlist(nixl_capi_mem_type_t t, nixl_capi_xfer_dlist_t *l) { return l ? (NEW(l)->type = t, OK) : INVAL; }
nixl_capi_status_t nixl_capi_xfer_dlist_add_desc(nixl_capi_xfer_dlist_t l, uintptr_t addr, size_t len, uint64_t dev_id) {
	(void)dev_id;
	return l ? (dpush(&l->l, addr, len), OK) : INVAL;
}
nixl_capi_status_t nixl_capi_destroy_xfer_dlist(nixl_capi_xfer_dlist_t l) { return l ? (free(l->l.d), free(l), OK) : INVAL; }

nixl_capi_status_t nixl_capi_get_local_md(nixl_capi_agent_t a, void **data, size_t *len) {
	struct buf b = {0};
	if (!a || !data || !len) return INVAL;
	bprintf(&b, "{\"name\":");
	bjson(&b, a->name);
	bprintf(&b, ",\"addr\":[\"127.0.0.1\",0]}"); /* an initiator only: it serves nothing */
	*data = b.p, *len = b.n;
	return OK;
}
nixl_capi_status_t nixl_capi_load_remote_md(nixl_capi_agent_t a, const void *data, size_t len, char **agent_name) {
	char *md, *name = NULL, *host = NULL;
	int port = 0;
	if (!a || !data || !len || !agent_name) return INVAL;
	md = memcpy(xcalloc(len + 1), data, len);
	int bad = parse_md(md, &name, &host, &port);
	free(md);
	if (bad) {
		free(name), free(host);
		return say(INVAL, "metadata is not a stand-in agent's {\"name\": ..., \"addr\": [host, port]}");
	}
	struct peer **pp = find_peer(a, name), *p = xcalloc(sizeof *p);
	if (*pp) drop_peer(pp); /* loaded again: its address anew */
	*p = (struct peer){a->peers, name, host, port, -1};
	a->peers = p;
	*agent_name = xstrdup(name);
	return OK;
}
nixl_capi_status_t nixl_capi_invalidate_remote_md(nixl_capi_agent_t a, const char *remote) {
	if (!a || !remote) return INVAL;
	struct peer **pp = find_peer(a, remote);
	return *pp ? (drop_peer(pp), OK) : say(NOT_FOUND, "no metadata for agent %s", remote);
}

/* --- transfers --- */

static bool registered(nixl_capi_agent_t a, const struct desc *d) {
	for (size_t j = 0; j < a->regs.n; j++)
		if (d->addr >= a->regs.d[j].addr && d->addr + d->len <= a->regs.d[j].addr + a->regs.d[j].len) return true;
	return false;
}
nixl_capi_status_t nixl_capi_prep_xfer_dlist(nixl_capi_agent_t a, const char *agent_name, nixl_capi_xfer_dlist_t l,
					     nixl_capi_xfer_dlist_handle_t *h, nixl_capi_opt_args_t o) {
	(void)o;
	if (!a || !agent_name || !l || !h) return INVAL;
	if (*agent_name && !*find_peer(a, agent_name)) return say(NOT_FOUND, "no metadata for agent %s", agent_name);
	for (size_t i = 0; !*agent_name && i < l->l.n; i++) /* as NIXL: local descs lie in registered memory */
		if (l->type != NIXL_CAPI_MEM_DRAM || !registered(a, &l->l.d[i]))
			return say(NOT_FOUND, "local descriptor %zu is not in registered DRAM", i);
	*h = xcalloc(sizeof **h);
	(*h)->agent = xstrdup(agent_name);
	(*h)->l = (struct descs){xmemdup(l->l.d, l->l.n * sizeof *l->l.d), l->l.n, l->l.n};
	return OK;
}
nixl_capi_status_t nixl_capi_release_xfer_dlist_handle(nixl_capi_agent_t a, nixl_capi_xfer_dlist_handle_t h) {
	if (!a || !h) return INVAL;
	free(h->agent), free(h->l.d), free(h);
	return OK;
}
static bool pick(struct descs *to, const struct descs *from, const int *idx, size_t n) {
	for (size_t i = 0; i < n; i++) {
		if (idx[i] < 0 || (size_t)idx[i] >= from->n) return false;
		dpush(to, from->d[idx[i]].addr, from->d[idx[i]].len);
	}
	return true;
}
nixl_capi_status_t nixl_capi_make_xfer_req(nixl_capi_agent_t a, nixl_capi_xfer_op_t op, nixl_capi_xfer_dlist_handle_t local,
					   const int *local_idx, size_t local_n, nixl_capi_xfer_dlist_handle_t remote,
					   const int *remote_idx, size_t remote_n, nixl_capi_xfer_req_t *req,
					   nixl_capi_opt_args_t o) {
	const char *why = NULL;
	if (!a || !local || !remote || !req) return INVAL;
	/* NIXL's own checks (nixlAgent::makeXferReq), with its statuses. */
	if (*local->agent || !*remote->agent) why = "local must be local, remote must be remote";
	else if (!local_n || local_n != remote_n) why = "different numbers of indices for local and remote";
	else if (op != NIXL_CAPI_XFER_OP_READ && op != NIXL_CAPI_XFER_OP_WRITE) why = "no such operation";
	if (why) return say(INVAL, "%s", why);
	if (!*find_peer(a, remote->agent)) return say(NOT_FOUND, "agent %s was invalidated", remote->agent);
	struct nixl_capi_xfer_req_s *r = xcalloc(sizeof *r);
	*r = (struct nixl_capi_xfer_req_s){.live = true, .op = op, .agent = xstrdup(remote->agent), .done = NIXL_CAPI_IN_PROG};
	if (!pick(&r->local, &local->l, local_idx, local_n) || !pick(&r->remote, &remote->l, remote_idx, remote_n))
		why = "an index out of range";
	for (size_t i = 0; !why && i < local_n; i++)
		if (r->local.d[i].len != r->remote.d[i].len) why = "local and remote lengths differ";
	if (why) {
		free(r->local.d), free(r->remote.d), free(r->agent), free(r);
		return say(INVAL, "%s", why);
	}
	if (o && o->has_notif) r->has_notif = true, r->msg = xmemdup(o->msg, o->len), r->len = o->len;
	*req = r;
	return OK;
}
nixl_capi_status_t nixl_capi_post_xfer_req(nixl_capi_agent_t a, nixl_capi_xfer_req_t r, nixl_capi_opt_args_t o) {
	if (!a || !r || !r->live) return INVAL;
	struct peer *p = *find_peer(a, r->agent);
	if (!p) return say(NOT_FOUND, "agent %s was invalidated", r->agent);
	if (o) { /* as NIXL's postXferReq: opt_args at the post replace the notification, even by none */
		free(r->msg), r->msg = NULL, r->len = 0;
		if ((r->has_notif = o->has_notif)) r->msg = xmemdup(o->msg, o->len), r->len = o->len;
	}
	r->posted = true, r->polls = 0;
	nixl_capi_status_t st = transfer(p, r);
	if (!st && r->has_notif) st = send_notif(a, p, r->msg, r->len);
	if (st) return r->done = st;
	posts++;
	return r->done = NIXL_CAPI_IN_PROG;
}
/* In progress at the first poll after a post, as a real transfer mostly is,
 * so that a timed loop's poll runs and not only its post. */
nixl_capi_status_t nixl_capi_get_xfer_status(nixl_capi_agent_t a, nixl_capi_xfer_req_t r) {
	if (!a || !r || !r->live) return INVAL;
	if (!r->posted) return NIXL_CAPI_ERROR_BACKEND; /* NIXL_ERR_NOT_POSTED */
	if (r->done != NIXL_CAPI_IN_PROG) return r->done;
	if (++r->polls % 2) return NIXL_CAPI_IN_PROG;
	return r->done = getenv("NIXL_STANDIN_STATUS_ERR") ? NIXL_CAPI_ERROR_BACKEND : OK;
}
nixl_capi_status_t nixl_capi_release_xfer_req(nixl_capi_agent_t a, nixl_capi_xfer_req_t r) {
	if (!a || !r || !r->live) return INVAL;
	free(r->local.d), free(r->remote.d), free(r->agent), free(r->msg);
	r->live = false;
	return OK;
}
/* As NIXL's wrapper: only once released. */
nixl_capi_status_t nixl_capi_destroy_xfer_req(nixl_capi_xfer_req_t r) {
	if (!r) return INVAL;
	if (r->live) return NIXL_CAPI_ERROR_INVALID_STATE;
	free(r);
	return OK;
}
nixl_capi_status_t nixl_capi_gen_notif(nixl_capi_agent_t a, const char *remote, const void *data, size_t len,
				       nixl_capi_opt_args_t o) {
	(void)o;
	if (!a || !remote || (!data && len)) return INVAL;
	struct peer *p = *find_peer(a, remote);
	return p ? send_notif(a, p, data, len) : say(NOT_FOUND, "no metadata for agent %s", remote);
}
