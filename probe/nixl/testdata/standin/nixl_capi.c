/* Stand-in for NIXL's C API (libnixl_capi.so, the wrapper under NIXL's Rust
 * bindings), rdmabench's own: the calls the NIXL probe's native initiator and
 * target make, moving real bytes over TCP in _api.py's frames, so that CI can
 * run the native probe without a GPU or NIXL. Each agent serves its registered
 * DRAM as the Python stand-in's agent (nixl/_api.py) does, a listener thread
 * and a thread per connection, and talks to either kind of agent as a peer.
 * One caller thread per agent; never a measurement of NIXL.
 * Build: gcc -O2 -Wall -shared -fPIC -o libnixl_capi.so nixl_capi.c
 * (glibc 2.34 or later has pthreads in libc: no -pthread needed). */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
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
typedef struct nixl_capi_notif_map_s *nixl_capi_notif_map_t;

#define OK NIXL_CAPI_SUCCESS
#define INVAL NIXL_CAPI_ERROR_INVALID_PARAM
#define NOT_FOUND NIXL_CAPI_ERROR_NOT_FOUND

struct desc { uintptr_t addr; size_t len; };
struct descs { struct desc *d; size_t n, cap; };
struct peer { struct peer *next; char *name, *host; int port, fd; };
struct note { struct note *next; char *from, *msg; size_t len; }; /* a notification received */
struct conn { struct conn *next; struct nixl_capi_agent_s *a; int fd; pthread_t th; bool ended; };
struct nixl_capi_agent_s {
	char *name, *host; /* host and port: where peers reach our listener */
	bool ucx;
	struct descs regs;
	struct peer *peers;
	int lfd, port;
	pthread_t listener;
	pthread_mutex_t mu; /* between the caller and the serving threads: regs, notes, conns */
	struct note *notes, **tail;
	size_t queued; /* notes' count, read without mu for get_notifs' quick look */
	struct conn *conns;
};
struct blob { char *p; size_t n; };
struct notifs { char *agent; struct blob *b; size_t n, cap; };
/* As NIXL's nixl_notifs_t, a map of agent to its messages; ours in the order first seen. */
struct nixl_capi_notif_map_s { struct notifs *a; size_t n, cap; };
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

enum { IN = 1, MORE = 2 }; /* io_all's how: received, or sent (MORE: more follows, corked) */
/* All n bytes sent, or received (IN); a peer that went away is ECONNRESET. */
static int io_all(int fd, void *p, size_t n, int how) {
	for (char *c = p; n > 0;) {
		ssize_t k = how & IN ? recv(fd, c, n, 0) : send(fd, c, n, MSG_NOSIGNAL | (how & MORE ? MSG_MORE : 0));
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
	int bad = st || io_all(p->fd, f, n + 16, 0); /* the lengths and header in one segment */
	free(f), free(h->p);
	if (st) return st;
	for (size_t i = 0; !bad && i < out->n; i++) bad = io_all(p->fd, (void *)out->d[i].addr, out->d[i].len, 0);
	if (bad || io_all(p->fd, b, 8, IN)) return io_failed(p, what);
	if ((n = unbe64(b)) > 1 << 20) return errno = EPROTO, io_failed(p, what);
	char *reply = xcalloc(n + 1);
	bad = io_all(p->fd, reply, n, IN) || io_all(p->fd, b, 8, IN);
	if (!bad && (!strstr(reply, kind) || unbe64(b) != total(in))) bad = 1, errno = EPROTO;
	free(reply);
	for (size_t i = 0; !bad && i < in->n; i++) bad = io_all(p->fd, (void *)in->d[i].addr, in->d[i].len, IN);
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

/* --- serving: the target's side of the wire, as _api.py's nixl_agent._handle --- */

/* d lies in one registered region; no sum that could wrap, for a peer's numbers are any. */
static bool registered(nixl_capi_agent_t a, const struct desc *d) {
	for (size_t j = 0; j < a->regs.n; j++) {
		const struct desc *r = &a->regs.d[j];
		if (d->addr >= r->addr && d->len <= r->len && d->addr - r->addr <= r->len - d->len) return true;
	}
	return false;
}
static int jnum(const char **s, uint64_t *v) {
	const char *p = blank(*s);
	char *e;
	if (*p < '0' || *p > '9') return -1;
	errno = 0;
	*v = strtoull(p, &e, 10);
	return errno ? -1 : (*s = e, 0);
}
/* [[addr, len], ...] */
static int jdescs(const char **s, struct descs *d) {
	const char *p = blank(*s);
	uint64_t addr, len;
	if (*p != '[') return -1;
	if (*(p = blank(p + 1)) == ']') return *s = p + 1, 0;
	for (;; p++) {
		if (*(p = blank(p)) != '[') return -1;
		p++;
		if (jnum(&p, &addr) || *(p = blank(p)) != ',') return -1;
		p++;
		if (jnum(&p, &len) || *(p = blank(p)) != ']') return -1;
		dpush(d, addr, len);
		if (*(p = blank(p + 1)) == ']') return *s = p + 1, 0;
		if (*p != ',') return -1;
	}
}
/* A request's header: {"kind": ..., "descs": [[addr, len], ...]} or {"kind": ..., "from": ...}. */
static int parse_req(const char *s, char **kind, char **from, struct descs *d) {
	char *key = NULL;
	bool descs = false;
	if (*(s = blank(s)) != '{') return -1;
	for (s++;; s++) {
		if (!(key = jstr(&s)) || *(s = blank(s)) != ':') break;
		s++;
		if (!strcmp(key, "kind") && !*kind) {
			if (!(*kind = jstr(&s))) break;
		} else if (!strcmp(key, "from") && !*from) {
			if (!(*from = jstr(&s))) break;
		} else if (!strcmp(key, "descs") && !descs) {
			if (jdescs(&s, d)) break;
			descs = true;
		} else break;
		free(key), key = NULL;
		if (*(s = blank(s)) == '}') return *kind ? 0 : -1;
		if (*s != ',') break;
	}
	free(key);
	return -1;
}
/* A reply: its header, then the descs' bytes (READ's), the first byte
 * flipped where flip (NIXL_STANDIN_CORRUPT, for tests: wrong bytes DONE). */
static int reply(int fd, const char *kind, const struct descs *d, bool flip) {
	char h[64];
	unsigned char f[sizeof h + 16];
	uint64_t n = (uint64_t)snprintf(h, sizeof h, "{\"kind\": \"%s\"}", kind), left = d ? total(d) : 0;
	be64(f, n), memcpy(f + 8, h, n), be64(f + 8 + n, left);
	if (io_all(fd, f, n + 16, left ? MORE : 0)) return -1;
	for (size_t i = 0; d && i < d->n; i++) {
		unsigned char *p = (void *)d->d[i].addr, c;
		size_t k = d->d[i].len;
		if (flip && k) {
			c = *p++ ^ 0xFF, k--, left--, flip = false;
			if (io_all(fd, &c, 1, left ? MORE : 0)) return -1;
		}
		left -= k;
		if (io_all(fd, p, k, left ? MORE : 0)) return -1;
	}
	return 0;
}
static bool env_set(const char *name) { /* as Python's truth of os.environ.get */
	const char *v = getenv(name);
	return v && *v;
}
#define MAX_HEADER (64u << 20) /* a READ of many descs is a long header */
#define MAX_NOTIF (64u << 20)
/* One request served; -1 ends the connection: the peer went away (or
 * destroy_agent shut it), or said something we cannot serve (said here). */
static int serve_one(nixl_capi_agent_t a, int fd) {
	unsigned char b[8];
	char *h = NULL, *kind = NULL, *from = NULL, *msg = NULL;
	const char *why = NULL;
	struct descs d = {0};
	uint64_t n;
	int ret = -1;
	if (io_all(fd, b, 8, IN)) return -1;
	if ((n = unbe64(b)) > MAX_HEADER) {
		why = "a header too long";
		goto out;
	}
	h = xcalloc(n + 1);
	if (io_all(fd, h, n, IN) || io_all(fd, b, 8, IN)) goto out;
	n = unbe64(b); /* now the payload's length */
	if (parse_req(h, &kind, &from, &d)) {
		why = "a header not a stand-in's request";
		goto out;
	}
	bool rd = !strcmp(kind, "READ"), wr = !strcmp(kind, "WRITE");
	if (rd || wr) {
		/* Checked, as NIXL checks a remote's descs against its metadata
		 * (ours says no regions): a wrong address is a line, not a crash. */
		pthread_mutex_lock(&a->mu);
		for (size_t i = 0; !why && i < d.n; i++)
			if (!registered(a, &d.d[i])) why = "an address outside registered memory";
		pthread_mutex_unlock(&a->mu);
		if (!why && n != (wr ? total(&d) : 0)) why = "a payload of the wrong length";
		if (why) goto out;
		if (rd) {
			ret = reply(fd, "DATA", &d, env_set("NIXL_STANDIN_CORRUPT"));
			goto out;
		}
		/* The bytes straight into their places. */
		for (size_t i = 0; i < d.n; i++)
			if (io_all(fd, (void *)d.d[i].addr, d.d[i].len, IN)) goto out;
		for (size_t i = 0; i < d.n && env_set("NIXL_STANDIN_CORRUPT_WRITE"); i++)
			if (d.d[i].len) { /* for tests: a WRITE DONE with wrong bytes */
				*(unsigned char *)d.d[i].addr ^= 0xFF;
				break;
			}
		ret = reply(fd, "OK", NULL, false);
	} else if (!strcmp(kind, "NOTIF") && from) {
		if (n > MAX_NOTIF) {
			why = "a notification too long";
			goto out;
		}
		msg = xrealloc(NULL, n + 1);
		if (io_all(fd, msg, n, IN)) goto out;
		msg[n] = 0;
		struct note *t = xcalloc(sizeof *t);
		*t = (struct note){NULL, from, msg, n};
		from = msg = NULL;
		pthread_mutex_lock(&a->mu);
		*a->tail = t, a->tail = &t->next;
		__atomic_store_n(&a->queued, a->queued + 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&a->mu);
		ret = reply(fd, "OK", NULL, false);
	} else why = "an unknown request";
out:
	if (why) say(0, "agent %s: %s%s%s: connection dropped", a->name, why, kind ? " in a " : "", kind ? kind : "");
	free(h), free(kind), free(from), free(msg), free(d.d);
	return ret;
}
/* Threads of ours in a Go program (purego, no cgo) take no signals: the Go
 * runtime's handlers expect its own threads. They inherit this mask. */
static int spawn(pthread_t *t, void *(*fn)(void *), void *arg) {
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}
static void *serve_conn(void *arg) {
	struct conn *c = arg;
	while (!serve_one(c->a, c->fd)) {}
	shutdown(c->fd, SHUT_RDWR); /* the peer sees the end now; the fd is closed at the join */
	pthread_mutex_lock(&c->a->mu);
	c->ended = true;
	pthread_mutex_unlock(&c->a->mu);
	return NULL;
}
/* Joins (all, or the ended) connections' threads, closes their sockets. */
static void reap(nixl_capi_agent_t a, bool all) {
	pthread_mutex_lock(&a->mu);
	for (struct conn **cp = &a->conns, *c; (c = *cp);) {
		if (!all && !c->ended) {
			cp = &c->next;
			continue;
		}
		*cp = c->next;
		pthread_mutex_unlock(&a->mu); /* its thread may yet want mu to say it ended */
		shutdown(c->fd, SHUT_RDWR); /* a thread mid-request fails its recv or send and ends */
		pthread_join(c->th, NULL);
		close(c->fd), free(c);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
}
static void *listen_loop(void *arg) {
	nixl_capi_agent_t a = arg;
	int one = 1;
	for (;;) {
		int fd = accept4(a->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED) continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				say(0, "agent %s: accept: %s", a->name, strerror(errno));
				usleep(100000);
				continue;
			}
			return NULL; /* EINVAL: destroy_agent shut the listener */
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		reap(a, false);
		struct conn *c = xcalloc(sizeof *c);
		*c = (struct conn){.a = a, .fd = fd};
		pthread_mutex_lock(&a->mu);
		int err = spawn(&c->th, serve_conn, c);
		if (!err) c->next = a->conns, a->conns = c;
		pthread_mutex_unlock(&a->mu);
		if (err) say(0, "agent %s: no thread for a connection: %s", a->name, strerror(err)), close(fd), free(c);
	}
}
/* The listener, on $NIXL_STANDIN_BIND (127.0.0.1 unset, any address empty), port 0. */
static nixl_capi_status_t start_serving(nixl_capi_agent_t a) {
	const char *bind_to = getenv("NIXL_STANDIN_BIND"), *addr = getenv("NIXL_STANDIN_ADDR");
	struct addrinfo hints = {.ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM}, *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	int err, one = 1;
	if (!bind_to) bind_to = "127.0.0.1";
	if ((err = getaddrinfo(*bind_to ? bind_to : NULL, "0", &hints, &res)))
		return say(NIXL_CAPI_ERROR_BACKEND, "cannot resolve %s: %s", bind_to, gai_strerror(err));
	for (ai = res; ai && a->lfd < 0; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) { err = errno; continue; }
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, SOMAXCONN) && !getsockname(fd, (void *)&ss, &sl)) {
			a->lfd = fd;
			continue;
		}
		err = errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (a->lfd < 0) return say(NIXL_CAPI_ERROR_BACKEND, "cannot listen on %s: %s", bind_to, strerror(err));
	a->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
	a->host = xstrdup(addr && *addr ? addr : "127.0.0.1");
	if ((err = spawn(&a->listener, listen_loop, a))) {
		close(a->lfd), a->lfd = -1;
		return say(NIXL_CAPI_ERROR_BACKEND, "no listener thread: %s", strerror(err));
	}
	return OK;
}
/* The listener closed, every connection's thread joined, what they queued freed. */
static void stop_serving(nixl_capi_agent_t a) {
	if (a->lfd >= 0) {
		shutdown(a->lfd, SHUT_RDWR); /* its accept fails: the thread ends */
		pthread_join(a->listener, NULL);
		close(a->lfd);
	}
	reap(a, true); /* after the listener's join: no connection comes after */
	for (struct note *t; (t = a->notes);) a->notes = t->next, free(t->from), free(t->msg), free(t);
}

/* --- agents, plugins, backends, options, lists, metadata --- */

#define NEW(out) (*(out) = xcalloc(sizeof **(out))) /* a handle the caller destroys */

static void free_agent(nixl_capi_agent_t a) {
	stop_serving(a);
	pthread_mutex_destroy(&a->mu);
	while (a->peers) drop_peer(&a->peers);
	free(a->regs.d), free(a->name), free(a->host), free(a);
}
/* Serving from its creation, as NIXL's agent (its backend's listener) is. */
nixl_capi_status_t nixl_capi_create_agent(const char *name, nixl_capi_agent_t *agent) {
	if (!name || !agent) return INVAL;
	nixl_capi_agent_t a = xcalloc(sizeof *a);
	a->name = xstrdup(name), a->lfd = -1, a->tail = &a->notes;
	pthread_mutex_init(&a->mu, NULL);
	nixl_capi_status_t st = start_serving(a);
	if (st) return free_agent(a), st;
	*agent = a;
	return OK;
}
nixl_capi_status_t nixl_capi_create_configured_agent(const char *name, const nixl_capi_agent_config_t *cfg,
						     nixl_capi_agent_t *agent) {
	return cfg ? nixl_capi_create_agent(name, agent) : INVAL;
}
nixl_capi_status_t nixl_capi_destroy_agent(nixl_capi_agent_t a) {
	/* Said here too: a Go program that loads this library without cgo never runs its destructors. */
	say_posts();
	posts = 0;
	return a ? (free_agent(a), OK) : INVAL;
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
	pthread_mutex_lock(&a->mu); /* the serving threads check addresses against regs */
	for (size_t i = 0; i < l->l.n; i++) dpush(&a->regs, l->l.d[i].addr, l->l.d[i].len);
	pthread_mutex_unlock(&a->mu);
	return OK;
}
nixl_capi_status_t nixl_capi_deregister_mem(nixl_capi_agent_t a, nixl_capi_reg_dlist_t l, nixl_capi_opt_args_t o) {
	(void)o;
	if (!a || !l) return INVAL;
	pthread_mutex_lock(&a->mu);
	for (size_t i = 0; i < l->l.n; i++)
		for (size_t j = 0; j < a->regs.n; j++)
			if (a->regs.d[j].addr == l->l.d[i].addr && a->regs.d[j].len == l->l.d[i].len) {
				a->regs.d[j] = a->regs.d[--a->regs.n];
				break;
			}
	pthread_mutex_unlock(&a->mu);
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
	bprintf(&b, ",\"addr\":[");
	bjson(&b, a->host);
	bprintf(&b, ",%d]}", a->port);
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

/* --- notifications received: NIXL's getNotifs and its map --- */

nixl_capi_status_t nixl_capi_create_notif_map(nixl_capi_notif_map_t *m) { return m ? (NEW(m), OK) : INVAL; }
nixl_capi_status_t nixl_capi_notif_map_clear(nixl_capi_notif_map_t m) {
	if (!m) return INVAL;
	for (size_t i = 0; i < m->n; i++) {
		for (size_t j = 0; j < m->a[i].n; j++) free(m->a[i].b[j].p);
		free(m->a[i].b), free(m->a[i].agent);
	}
	m->n = 0; /* the array kept, for the next messages */
	return OK;
}
nixl_capi_status_t nixl_capi_destroy_notif_map(nixl_capi_notif_map_t m) {
	return m ? (nixl_capi_notif_map_clear(m), free(m->a), free(m), OK) : INVAL;
}
static struct notifs *notifs_of(nixl_capi_notif_map_t m, const char *agent) {
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->a[i].agent, agent)) return &m->a[i];
	return NULL;
}
/* As NIXL's getNotifs: what came since the last call, appended to the map's
 * messages per agent; the map is the caller's to clear. Called in a tight
 * loop by a target: nothing queued costs no lock. */
nixl_capi_status_t nixl_capi_get_notifs(nixl_capi_agent_t a, nixl_capi_notif_map_t m, nixl_capi_opt_args_t o) {
	(void)o;
	if (!a || !m) return INVAL;
	if (!a->ucx) return say(NIXL_CAPI_ERROR_BACKEND, "no backends support notifications"); /* as NIXL */
	if (!__atomic_load_n(&a->queued, __ATOMIC_ACQUIRE)) return OK;
	pthread_mutex_lock(&a->mu);
	struct note *t = a->notes, *next;
	a->notes = NULL, a->tail = &a->notes;
	__atomic_store_n(&a->queued, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&a->mu);
	for (; t; t = next) { /* their strings move into the map */
		struct notifs *e = notifs_of(m, t->from);
		if (!e) {
			if (m->n == m->cap) m->a = xrealloc(m->a, (m->cap = m->cap ? 2 * m->cap : 4) * sizeof *m->a);
			e = &m->a[m->n++];
			*e = (struct notifs){.agent = t->from};
		} else free(t->from);
		if (e->n == e->cap) e->b = xrealloc(e->b, (e->cap = e->cap ? 2 * e->cap : 8) * sizeof *e->b);
		e->b[e->n++] = (struct blob){t->msg, t->len};
		next = t->next;
		free(t);
	}
	return OK;
}
nixl_capi_status_t nixl_capi_notif_map_size(nixl_capi_notif_map_t m, size_t *n) { return m && n ? (*n = m->n, OK) : INVAL; }
nixl_capi_status_t nixl_capi_notif_map_get_agent_at(nixl_capi_notif_map_t m, size_t i, const char **agent) {
	return m && agent && i < m->n ? (*agent = m->a[i].agent, OK) : INVAL;
}
nixl_capi_status_t nixl_capi_notif_map_get_notifs_size(nixl_capi_notif_map_t m, const char *agent, size_t *n) {
	struct notifs *e = m && agent && n ? notifs_of(m, agent) : NULL;
	return e ? (*n = e->n, OK) : INVAL; /* as NIXL's wrapper: an agent not in the map is INVALID_PARAM */
}
/* The message in the map's storage (NUL-terminated, "" when empty), valid till clear or destroy. */
nixl_capi_status_t nixl_capi_notif_map_get_notif(nixl_capi_notif_map_t m, const char *agent, size_t i, const void **data,
						 size_t *len) {
	struct notifs *e = m && agent && data && len ? notifs_of(m, agent) : NULL;
	return e && i < e->n ? (*data = e->b[i].p, *len = e->b[i].n, OK) : INVAL;
}
