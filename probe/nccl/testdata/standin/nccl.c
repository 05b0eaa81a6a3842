/* Stand-in for NCCL (libnccl.so.2), rdmabench's own: the calls the NCCL probe
 * (probe/nccl) makes, carried over TCP between the ranks' processes in a star
 * around rank 0 (which computes every result), so that CI can run the probe's
 * launch, its etcd rendezvous of the unique id and its output without a GPU.
 * Collectives run at once (streams are ignored); the figures the probe prints
 * over it are what it measured over these sockets. Never the proof: the
 * probe's real runs are under testdata/gpu. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef int ncclResult_t;
enum { ok = 0, systemError = 2, invalidArgument = 4, invalidUsage = 5 };
typedef struct { char internal[128]; } ncclUniqueId;
struct comm { int rank, n, *fds; };
typedef struct comm *ncclComm_t;

static int listenFd = -1;
static char lastError[256];

static ncclResult_t fail(ncclResult_t r, const char *what) {
	snprintf(lastError, sizeof lastError, "stand-in: %s", what);
	return r;
}

static int sendAll(int fd, const void *b, size_t n) {
	const char *p = b;
	while (n > 0) { ssize_t w = send(fd, p, n, MSG_NOSIGNAL); if (w <= 0) return -1; p += w; n -= (size_t)w; }
	return 0;
}
static int recvAll(int fd, void *b, size_t n) {
	char *p = b;
	while (n > 0) { ssize_t r = recv(fd, p, n, 0); if (r <= 0) return -1; p += r; n -= (size_t)r; }
	return 0;
}

ncclResult_t ncclGetVersion(int *v) { *v = 22809; return ok; }
const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case ok: return "no error";
	case systemError: return "unhandled system error (stand-in)";
	case invalidArgument: return "invalid argument (stand-in)";
	case invalidUsage: return "invalid usage (stand-in)";
	}
	return "error (stand-in)";
}
const char *ncclGetLastError(ncclComm_t c) { (void)c; return lastError; }
ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *e) { (void)c; *e = ok; return ok; }

/* info logs as NCCL does: to NCCL_DEBUG_FILE (line-buffered) when set,
 * else to stdout. */
static void info(int rank, const char *msg) {
	static FILE *log;
	const char *d = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
	if (!d || strcasecmp(d, "INFO")) return;
	if (!log) {
		log = file ? fopen(file, "w") : stdout;
		if (!log) log = stdout;
		setlinebuf(log);
	}
	char host[64] = "standin";
	gethostname(host, sizeof host);
	fprintf(log, "%s:%d:%d [%d] NCCL INFO %s\n", host, getpid(), getpid(), rank, msg);
}

/* The id: "RBSI", rank 0's IPv4 address and port. */
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
	const char *addr = getenv("RDMABENCH_STANDIN_ADDR");
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof sa;
	int one = 1;
	listenFd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(listenFd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (listenFd < 0 || bind(listenFd, (struct sockaddr *)&sa, sizeof sa) || listen(listenFd, 64) ||
	    getsockname(listenFd, (struct sockaddr *)&sa, &len))
		return fail(systemError, "cannot listen for the ranks");
	memset(id, 0, sizeof *id);
	memcpy(id->internal, "RBSI", 4);
	in_addr_t ip = inet_addr(addr ? addr : "127.0.0.1");
	memcpy(id->internal + 4, &ip, 4);
	memcpy(id->internal + 8, &sa.sin_port, 2);
	return ok;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int n, ncclUniqueId id, int rank) {
	if (memcmp(id.internal, "RBSI", 4) || n < 1 || rank < 0 || rank >= n) return fail(invalidArgument, "not a stand-in unique id, or a bad rank");
	struct comm *c = calloc(1, sizeof *c);
	c->rank = rank, c->n = n, c->fds = calloc((size_t)n, sizeof(int));
	if (rank == 0) {
		for (int i = 1; i < n; i++) {
			int fd = accept(listenFd, NULL, NULL), r = -1, one = 1;
			if (fd < 0 || recvAll(fd, &r, sizeof r) || r <= 0 || r >= n) return fail(systemError, "a rank failed to join");
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
			c->fds[r] = fd;
		}
		close(listenFd), listenFd = -1;
	} else {
		struct sockaddr_in sa = {.sin_family = AF_INET};
		memcpy(&sa.sin_addr, id.internal + 4, 4);
		memcpy(&sa.sin_port, id.internal + 8, 2);
		int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1, tries = 0;
		while (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
			if (++tries > 300) return fail(systemError, "cannot reach rank 0");
			close(fd), fd = socket(AF_INET, SOCK_STREAM, 0), usleep(100000);
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (sendAll(fd, &rank, sizeof rank)) return fail(systemError, "cannot reach rank 0");
		c->fds[0] = fd;
	}
	info(rank, "NCCL version 2.28.9+standin (rdmabench's stand-in library: TCP through rank 0)");
	info(rank, "Using network Socket");
	*out = c;
	return ok;
}

ncclResult_t ncclCommDestroy(ncclComm_t c) {
	for (int i = 0; i < c->n; i++)
		if (c->fds[i] > 0) close(c->fds[i]);
	free(c->fds), free(c);
	return ok;
}

static size_t typeSize(int t) {
	static const size_t sz[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
	return t >= 0 && t < 10 ? sz[t] : 0;
}

/* sum adds n elements of type t from src into dst. */
static int sum(void *dst, const void *src, size_t n, int t) {
#define ADD(T) { T *d = dst; const T *s = src; for (size_t i = 0; i < n; i++) d[i] += s[i]; return 0; }
	switch (t) {
	case 0: ADD(int8_t) case 1: ADD(uint8_t) case 2: ADD(int32_t) case 3: ADD(uint32_t)
	case 4: ADD(int64_t) case 5: ADD(uint64_t) case 7: ADD(float) case 8: ADD(double)
	}
	return -1;
#undef ADD
}

enum { opAllReduce, opAllGather, opReduceScatter, opBroadcast };

/* collective: every rank's send buffer goes to rank 0, which sends each rank
 * its receive buffer back. */
static ncclResult_t collective(int op, const void *send, void *recv, size_t count, int t, ncclComm_t c) {
	size_t es = typeSize(t), in = count * es, out = count * es;
	if (!es) return fail(invalidArgument, "unknown data type");
	if (op == opAllGather) out = in * (size_t)c->n;
	if (op == opReduceScatter) in = out * (size_t)c->n;
	if (c->rank != 0) {
		if (sendAll(c->fds[0], send, in) || recvAll(c->fds[0], recv, out)) return fail(systemError, "rank 0 went away");
		return ok;
	}
	char *all = malloc(in * (size_t)c->n), *res = malloc(in > out ? in : out);
	memcpy(all, send, in);
	for (int r = 1; r < c->n; r++)
		if (recvAll(c->fds[r], all + in * (size_t)r, in)) return fail(systemError, "a rank went away");
	for (int r = 0; r < c->n; r++) {
		switch (op) {
		case opAllReduce:
		case opReduceScatter:
			memcpy(res, all, in);
			for (int k = 1; k < c->n; k++)
				if (sum(res, all + in * (size_t)k, in / es, t)) return fail(invalidArgument, "no sum for this type in the stand-in");
			if (op == opReduceScatter) memmove(res, res + out * (size_t)r, out);
			break;
		case opAllGather: memcpy(res, all, out); break;
		case opBroadcast: memcpy(res, all, out); break;
		}
		if (r == 0) memcpy(recv, res, out);
		else if (sendAll(c->fds[r], res, out)) return fail(systemError, "a rank went away");
	}
	free(all), free(res);
	return ok;
}

ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, void *st) {
	(void)st;
	return op == 0 ? collective(opAllReduce, s, r, n, t, c) : fail(invalidArgument, "only sum");
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t n, int t, ncclComm_t c, void *st) { (void)st; return collective(opAllGather, s, r, n, t, c); }
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, int t, int op, ncclComm_t c, void *st) {
	(void)st;
	return op == 0 ? collective(opReduceScatter, s, r, n, t, c) : fail(invalidArgument, "only sum");
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, int t, int root, ncclComm_t c, void *st) {
	(void)st;
	return root == 0 ? collective(opBroadcast, s, r, n, t, c) : fail(invalidArgument, "only root 0");
}

/* Point to point: queued between ncclGroupStart and ncclGroupEnd, then
 * routed through rank 0. */
struct p2p { int peer; size_t bytes; const void *send; void *recv; };
static struct p2p sends[1024], recvs[1024];
static int nSends, nRecvs, depth;
static ncclComm_t groupComm;

ncclResult_t ncclGroupStart(void) { depth++; return ok; }
ncclResult_t ncclSend(const void *s, size_t n, int t, int peer, ncclComm_t c, void *st) {
	(void)st;
	if (!depth || nSends == 1024) return fail(invalidUsage, "the stand-in sends only inside a group");
	sends[nSends++] = (struct p2p){peer, n * typeSize(t), s, NULL}, groupComm = c;
	return ok;
}
ncclResult_t ncclRecv(void *r, size_t n, int t, int peer, ncclComm_t c, void *st) {
	(void)st;
	if (!depth || nRecvs == 1024) return fail(invalidUsage, "the stand-in receives only inside a group");
	recvs[nRecvs++] = (struct p2p){peer, n * typeSize(t), NULL, r}, groupComm = c;
	return ok;
}

/* A rank's message to rank 0: its sends (peer, bytes, data) and its
 * receives (peer, bytes); rank 0 answers each receive in order. */
struct msg { int from, peer; size_t bytes; char *data; int used; };

static ncclResult_t route(ncclComm_t c) {
	int fd0 = c->rank ? c->fds[0] : -1;
	if (c->rank != 0) {
		if (sendAll(fd0, &nSends, sizeof nSends)) return fail(systemError, "rank 0 went away");
		for (int i = 0; i < nSends; i++)
			if (sendAll(fd0, &sends[i].peer, sizeof(int)) || sendAll(fd0, &sends[i].bytes, sizeof(size_t)) ||
			    sendAll(fd0, sends[i].send, sends[i].bytes)) return fail(systemError, "rank 0 went away");
		for (int i = 0; i < nRecvs; i++)
			if (recvAll(fd0, recvs[i].recv, recvs[i].bytes)) return fail(systemError, "rank 0 went away");
		return ok;
	}
	int cap = 0, n = 0;
	struct msg *m = NULL;
	for (int r = 0; r < c->n; r++) {
		int k = nSends;
		if (r && recvAll(c->fds[r], &k, sizeof k)) return fail(systemError, "a rank went away");
		for (int i = 0; i < k; i++) {
			if (n == cap) cap = cap ? 2 * cap : 64, m = realloc(m, (size_t)cap * sizeof *m);
			struct msg *x = &m[n++];
			x->from = r, x->used = 0;
			if (r == 0) x->peer = sends[i].peer, x->bytes = sends[i].bytes, x->data = (char *)sends[i].send;
			else {
				if (recvAll(c->fds[r], &x->peer, sizeof(int)) || recvAll(c->fds[r], &x->bytes, sizeof(size_t))) return fail(systemError, "a rank went away");
				x->data = malloc(x->bytes);
				if (recvAll(c->fds[r], x->data, x->bytes)) return fail(systemError, "a rank went away");
			}
		}
	}
	/* Rank 0's own receives first, from the messages as sent; copies, since
	 * a send buffer may be the receive buffer (in place). */
	for (int i = 0; i < nRecvs; i++)
		for (int j = 0; j < n; j++)
			if (!m[j].used && m[j].peer == 0 && m[j].from == recvs[i].peer) {
				if (m[j].from == 0) { char *copy = malloc(m[j].bytes); memcpy(copy, m[j].data, m[j].bytes); m[j].data = copy, m[j].from = -1; }
				memcpy(recvs[i].recv, m[j].data, recvs[i].bytes < m[j].bytes ? recvs[i].bytes : m[j].bytes);
				m[j].used = 1;
				break;
			}
	/* The others' receives follow the order of the messages to them. */
	for (int j = 0; j < n; j++)
		if (!m[j].used && m[j].peer != 0 && sendAll(c->fds[m[j].peer], m[j].data, m[j].bytes)) return fail(systemError, "a rank went away");
	for (int j = 0; j < n; j++)
		if (m[j].from != 0) free(m[j].data);
	free(m);
	return ok;
}

ncclResult_t ncclGroupEnd(void) {
	if (depth == 0) return fail(invalidUsage, "group end without start");
	if (--depth > 0 || (!nSends && !nRecvs)) return ok;
	ncclResult_t r = route(groupComm);
	nSends = nRecvs = 0;
	return r;
}

#ifndef STANDIN_BEFORE_2_28
/* ncclAlltoAll (NCCL 2.28 on): every peer's part, as one group. Built
 * without it (-DSTANDIN_BEFORE_2_28) the stand-in is an older NCCL, and
 * the probe falls back to send/recv. */
ncclResult_t ncclAlltoAll(const void *s, void *r, size_t n, int t, ncclComm_t c, void *st) {
	size_t part = n * typeSize(t);
	ncclGroupStart();
	for (int peer = 0; peer < c->n; peer++) {
		ncclResult_t e = ncclSend((const char *)s + part * (size_t)peer, n, t, peer, c, st);
		if (e == ok) e = ncclRecv((char *)r + part * (size_t)peer, n, t, peer, c, st);
		if (e != ok) { depth = 0, nSends = nRecvs = 0; return e; }
	}
	return ncclGroupEnd();
}
#endif
