// SPDX-License-Identifier: MIT
/*
 * ernic_net against a real kernel, in private network namespaces: this
 * process gets veth0 (10.99.0.1, fd99::1), a child process holds the peer
 * veth1 (10.99.0.2, fd99::2, fe80::ff:fe00:9902), the gateway to
 * 10.98.0.0/24, fd98::/64 and (link-local next hop) fd97::/64.
 * Needs root (exit 77 otherwise) and iproute2.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ernic_net.h"

static const uint8_t mac0[6] = {0x02, 0, 0, 0, 0x99, 0x01};
static const uint8_t mac1[6] = {0x02, 0, 0, 0, 0x99, 0x02};
static const uint8_t zero_mac[6];

static pid_t peer;
static int peer_hold = -1;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

static struct ernic_ip ip(const char *text)
{
	struct ernic_ip r;

	assert_int_equal(ernic_ip_parse(text, &r), 0);
	return r;
}

/* The peer: a child parked in its own network namespace. */
static int start_peer(void)
{
	int ready[2], hold[2];
	char c;

	if (pipe(ready) || pipe(hold))
		return -1;
	peer = fork();
	if (peer < 0)
		return -1;
	if (!peer) {
		close(ready[0]);
		close(hold[1]);
		if (unshare(CLONE_NEWNET))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		/* Live until the parent closes its end. */
		while (read(hold[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	peer_hold = hold[1];
	if (read(ready[0], &c, 1) != 1)
		return -1;
	close(ready[0]);
	return 0;
}

static int setup(void **state)
{
	if (unshare(CLONE_NEWNET)) {
		perror("unshare(CLONE_NEWNET)");
		return -1;
	}
	if (start_peer())
		return -1;
	/* No DAD: link-local gateways must answer at once. Per netns. */
	if (sh("sysctl -qw net.ipv6.conf.default.accept_dad=0") ||
	    sh("nsenter -t %d -n sysctl -qw net.ipv6.conf.default.accept_dad=0",
	       (int)peer) ||
	    sh("ip link set lo up") ||
	    sh("ip link add veth0 address 02:00:00:00:99:01 type veth peer "
	       "name veth1 address 02:00:00:00:99:02 netns %d", (int)peer) ||
	    sh("ip addr add 10.99.0.1/24 dev veth0") ||
	    sh("ip -6 addr add fd99::1/64 dev veth0 nodad") ||
	    sh("ip link set veth0 up") ||
	    sh("nsenter -t %d -n sh -c 'ip link set lo up && "
	       "ip addr add 10.99.0.2/24 dev veth1 && "
	       "ip -6 addr add fd99::2/64 dev veth1 nodad && "
	       "ip addr add 10.98.0.1/32 dev lo && ip link set veth1 up'",
	       (int)peer) ||
	    sh("ip route add 10.98.0.0/24 via 10.99.0.2") ||
	    sh("ip -6 route add fd98::/64 via fd99::2") ||
	    sh("ip -6 route add fd97::/64 via fe80::ff:fe00:9902 dev veth0") ||
	    sh("ip route add blackhole 10.97.0.0/24"))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	int status;

	close(peer_hold);
	waitpid(peer, &status, 0);
	return 0;
}

static void test_local_netdev(void **state)
{
	char netdev[IF_NAMESIZE], err[256];
	struct ernic_ip a;
	uint8_t mac[6];

	a = ip("10.99.0.1");
	assert_int_equal(ernic_net_local_netdev(&a, netdev, mac, err,
						sizeof(err)), 0);
	/* The route says lo; the address belongs to veth0. */
	assert_string_equal(netdev, "veth0");
	assert_memory_equal(mac, mac0, 6);

	a = ip("fd99::1");
	assert_int_equal(ernic_net_local_netdev(&a, netdev, mac, err,
						sizeof(err)), 0);
	assert_string_equal(netdev, "veth0");

	a = ip("127.0.0.2"); /* local by prefix (127/8), no exact address */
	assert_int_equal(ernic_net_local_netdev(&a, netdev, mac, err,
						sizeof(err)), 0);
	assert_string_equal(netdev, "lo");
	assert_memory_equal(mac, zero_mac, 6);

	a = ip("::1");
	assert_int_equal(ernic_net_local_netdev(&a, netdev, mac, err,
						sizeof(err)), 0);
	assert_string_equal(netdev, "lo");

	a = ip("10.99.0.2");
	assert_int_equal(ernic_net_local_netdev(&a, netdev, mac, err,
						sizeof(err)), ENOENT);
	assert_string_equal(err, "10.99.0.2 is not an address of this host");

	a = ip("172.31.9.9"); /* no route at all */
	assert_int_equal(ernic_net_local_netdev(&a, netdev, mac, err,
						sizeof(err)), ENOENT);
	assert_string_equal(err, "172.31.9.9 is not an address of this host");
}

static void test_netdev_state(void **state)
{
	uint32_t mtu = 0;
	bool running = false;

	/* operstate UNKNOWN, but UP|RUNNING: usable. */
	assert_int_equal(ernic_net_netdev_state("lo", &mtu, &running), 0);
	assert_true(running);
	assert_int_equal(mtu, 65536);

	/* veth carrier follows the peer: allow it a moment. */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(ernic_net_netdev_state("veth0", &mtu,
							&running), 0);
		if (running)
			break;
		usleep(10000);
	}
	assert_true(running);
	assert_int_equal(mtu, 1500);

	/* A new veth is down. */
	assert_int_equal(sh("ip link add vdown0 mtu 9000 type veth peer name "
			    "vdown1"), 0);
	assert_int_equal(ernic_net_netdev_state("vdown0", &mtu, &running), 0);
	assert_false(running);
	assert_int_equal(mtu, 9000);
	assert_int_equal(sh("ip link del vdown0"), 0);

	assert_int_equal(ernic_net_netdev_state("nope0", &mtu, &running),
			 ENODEV);
	assert_int_equal(ernic_net_netdev_state("", &mtu, &running), EINVAL);
}

static void resolve_ok(const char *src, const char *dst, const uint8_t *want)
{
	struct ernic_ip s = ip(src), d = ip(dst);
	uint8_t mac[6];
	char err[256] = "";
	int rc;

	rc = ernic_net_resolve_mac(&s, &d, mac, 2000, err, sizeof(err));
	if (rc) {
		print_error("%s -> %s: %s\n", src, dst, err);
		fail();
	}
	assert_memory_equal(mac, want, 6);
}

static void test_resolve(void **state)
{
	resolve_ok("10.99.0.1", "10.99.0.2", mac1);	/* ARP */
	resolve_ok("fd99::1", "fd99::2", mac1);		/* NDP */
	resolve_ok("10.99.0.1", "10.98.0.1", mac1);	/* via gateway */
	resolve_ok("10.99.0.1", "10.98.0.77", mac1);
	resolve_ok("fd99::1", "fd98::5", mac1);
	resolve_ok("fd99::1", "fd97::5", mac1); /* link-local gateway */
	/* Local destinations: the owning netdev's MAC (zeros on lo). */
	resolve_ok("10.99.0.1", "10.99.0.1", mac0);
	resolve_ok("127.0.0.2", "127.0.0.3", zero_mac);
	resolve_ok("::1", "::1", zero_mac);
}

static long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void test_unreachable(void **state)
{
	struct ernic_ip s = ip("10.99.0.1"), d;
	uint8_t mac[6];
	char err[256];
	long t0, dt;

	/* Nobody answers for .77: give up after the timeout. */
	d = ip("10.99.0.77");
	t0 = now_ms();
	assert_int_equal(ernic_net_resolve_mac(&s, &d, mac, 200, err,
					       sizeof(err)), EHOSTUNREACH);
	dt = now_ms() - t0;
	assert_true(dt >= 200 && dt < 1500);
	assert_non_null(strstr(err, "10.99.0.77: next hop 10.99.0.77 on veth0 "
				    "did not resolve within 200 ms"));

	d = ip("172.31.9.9");
	assert_int_equal(ernic_net_resolve_mac(&s, &d, mac, 200, err,
					       sizeof(err)), EHOSTUNREACH);
	assert_string_equal(err,
			    "no route to 172.31.9.9 (Network is unreachable)");

	d = ip("10.97.0.1"); /* blackhole */
	assert_int_equal(ernic_net_resolve_mac(&s, &d, mac, 200, err,
					       sizeof(err)), EHOSTUNREACH);
	assert_string_equal(err, "no route to 10.97.0.1 (Invalid argument)");

	d = ip("10.99.0.255");
	assert_int_equal(ernic_net_resolve_mac(&s, &d, mac, 200, err,
					       sizeof(err)), EHOSTUNREACH);
	assert_string_equal(err,
			    "10.99.0.255 is not a unicast destination (broadcast)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local_netdev),
		cmocka_unit_test(test_netdev_state),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_unreachable),
	};

	if (geteuid() != 0) {
		printf("SKIP: needs root (creates network namespaces)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
