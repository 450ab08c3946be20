/*
 * A C program that uses quiche's own C API with a quiche-lbe controller
 * chosen by name: it downloads BYTES bytes from a `quic-bulk server` over
 * UDP, with LEDBAT++ as its own sender's controller, checks every byte
 * against quic-bulk's payload pattern, and exits 0.
 *
 *     download ADDRESS PORT BYTES CA_PEM [QLOG_PATH]
 *
 * ADDRESS is an IPv4 address (127.0.0.1). The server's certificate is
 * verified against CA_PEM (`quic-bulk server --write-cert CA_PEM`) for the
 * name "localhost". With QLOG_PATH the client writes
 * its qlog there. On any failure it prints one line to stderr and exits 1
 * (2 for bad arguments). It gives up after 30 seconds.
 *
 * Built and run by tests/c_download.rs (in quiche-lbe-ffi), linked against
 * target/release/libquiche_lbe_ffi.a.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <quiche.h>
#include <quiche_lbe.h>

/* apps/quic-bulk/src/protocol.rs: ALPN, the stream, the close code. */
#define BULK_ALPN "\x0albe-bulk/1"
#define DATA_STREAM 0
#define CLOSE_DONE 0

#define MAX_DATAGRAM 1350
#define GIVE_UP_SECONDS 30

static int fail(const char *what) {
    fprintf(stderr, "download: error: %s\n", what);
    return 1;
}

/* quic-bulk's payload (lbe-bulk's protocol.rs, `word_value`): word i, the
 * 8 bytes from offset 8 i, is (i + 1) * 0x9e3779b97f4a7c15 modulo 2^64,
 * little-endian; byte `offset` is byte offset % 8 of word offset / 8. */
static uint8_t pattern(uint64_t offset) {
    uint64_t word = (offset / 8 + 1) * 0x9e3779b97f4a7c15ULL;
    return (uint8_t) (word >> (8 * (offset % 8)));
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* Sends every packet quiche has for the server. */
static int flush(quiche_conn *conn, int sock) {
    uint8_t out[MAX_DATAGRAM];
    quiche_send_info info;
    for (;;) {
        ssize_t n = quiche_conn_send(conn, out, sizeof(out), &info);
        if (n == QUICHE_ERR_DONE) {
            return 0;
        }
        if (n < 0) {
            fprintf(stderr, "download: error: quiche_conn_send failed: %zd\n", n);
            return -1;
        }
        if (sendto(sock, out, (size_t) n, 0, (struct sockaddr *) &info.to, info.to_len) != n) {
            perror("download: error: sendto");
            return -1;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "download: error: usage: download ADDRESS PORT BYTES CA_PEM [QLOG_PATH]\n");
        return 2;
    }
    struct sockaddr_in peer = {.sin_family = AF_INET};
    char *port_end, *end;
    unsigned long port = strtoul(argv[2], &port_end, 10);
    unsigned long long bytes = strtoull(argv[3], &end, 10);
    if (inet_pton(AF_INET, argv[1], &peer.sin_addr) != 1) {
        fprintf(stderr, "download: error: ADDRESS '%s' is not an IPv4 address\n", argv[1]);
        return 2;
    }
    if (*port_end != '\0' || port == 0 || port > 65535) {
        fprintf(stderr, "download: error: PORT '%s' is not a port (1 to 65535)\n", argv[2]);
        return 2;
    }
    if (*end != '\0' || argv[3][0] == '\0' || argv[3][0] == '-') {
        fprintf(stderr, "download: error: BYTES '%s' is not a whole number\n", argv[3]);
        return 2;
    }
    peer.sin_port = htons((uint16_t) port);

    quiche_config *config = quiche_config_new(QUICHE_PROTOCOL_VERSION);
    if (config == NULL) {
        return fail("cannot create a quiche configuration");
    }

    /* Before registration quiche knows only its own names. */
    if (quiche_config_set_cc_algorithm_name(config, "ledbatpp") != QUICHE_ERR_CONGESTION_CONTROL) {
        return fail("quiche accepted 'ledbatpp' before quiche_lbe_register()");
    }
    if (quiche_lbe_register() != 0) {
        return fail("quiche_lbe_register() failed");
    }
    if (quiche_config_set_cc_algorithm_name(config, "ledbatpp:profile=none") !=
        QUICHE_ERR_CONGESTION_CONTROL) {
        return fail("quiche accepted the malformed 'ledbatpp:profile=none'");
    }
    if (quiche_config_set_cc_algorithm_name(config, "ledbatpp") != 0) {
        return fail("quiche refused 'ledbatpp' after quiche_lbe_register()");
    }

    quiche_config_set_application_protos(config, (const uint8_t *) BULK_ALPN,
                                         sizeof(BULK_ALPN) - 1);
    /* The server's certificate is verified (quiche's default for a client)
     * against CA_PEM, the certificate `quic-bulk server --write-cert` wrote;
     * the name checked is "localhost" (quiche_connect below), one of its
     * names. */
    if (quiche_config_load_verify_locations_from_file(config, argv[4]) != 0) {
        fprintf(stderr, "download: error: cannot load the CA certificate %s\n", argv[4]);
        return 1;
    }
    quiche_config_set_max_idle_timeout(config, 10000);
    quiche_config_set_max_recv_udp_payload_size(config, MAX_DATAGRAM);
    quiche_config_set_max_send_udp_payload_size(config, MAX_DATAGRAM);
    quiche_config_set_initial_max_data(config, 16 * 1024 * 1024);
    quiche_config_set_initial_max_stream_data_bidi_local(config, 16 * 1024 * 1024);
    quiche_config_set_initial_max_stream_data_bidi_remote(config, 1024 * 1024);
    quiche_config_set_initial_max_streams_bidi(config, 16);
    quiche_config_set_initial_max_streams_uni(config, 16);

    int sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (sock < 0) {
        perror("download: error: socket");
        return 1;
    }
    struct sockaddr_in local = {.sin_family = AF_INET};
    local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t local_len = sizeof(local);
    if (bind(sock, (struct sockaddr *) &local, sizeof(local)) != 0 ||
        getsockname(sock, (struct sockaddr *) &local, &local_len) != 0) {
        perror("download: error: bind");
        return 1;
    }

    uint8_t scid[16];
    for (size_t i = 0; i < sizeof(scid); i++) {
        scid[i] = (uint8_t) (i * 37 + (uintptr_t) &scid);
    }
    quiche_conn *conn = quiche_connect("localhost", scid, sizeof(scid),
                                       (struct sockaddr *) &local, local_len,
                                       (struct sockaddr *) &peer, sizeof(peer), config);
    if (conn == NULL) {
        return fail("quiche_connect failed");
    }
    if (argc == 6 && !quiche_conn_set_qlog_path(conn, argv[5], "download.c", "C client")) {
        fprintf(stderr, "download: error: cannot write the qlog to %s\n", argv[5]);
        return 1;
    }

    char request[256];
    int request_len = snprintf(request, sizeof(request),
                               "{\"direction\":\"download\",\"amount\":{\"bytes\":%llu},"
                               "\"cc\":\"cubic\",\"label\":\"c-client\"}\n",
                               bytes);
    bool requested = false;
    bool finished = false;
    uint64_t received = 0;
    uint8_t buf[65536];
    double give_up = now_seconds() + GIVE_UP_SECONDS;

    if (flush(conn, sock) != 0) {
        return 1;
    }
    while (!quiche_conn_is_closed(conn)) {
        if (now_seconds() > give_up) {
            fprintf(stderr, "download: error: gave up after %d s with %" PRIu64 " of %llu bytes\n",
                    GIVE_UP_SECONDS, received, bytes);
            return 1;
        }
        uint64_t timeout_ms = quiche_conn_timeout_as_millis(conn);
        struct pollfd pfd = {.fd = sock, .events = POLLIN};
        int ready = poll(&pfd, 1, timeout_ms > 1000 ? 1000 : (int) timeout_ms);
        if (ready < 0 && errno != EINTR) {
            perror("download: error: poll");
            return 1;
        }
        if (ready == 0) {
            quiche_conn_on_timeout(conn);
        }
        while (ready > 0) {
            struct sockaddr_storage from;
            socklen_t from_len = sizeof(from);
            ssize_t n = recvfrom(sock, buf, sizeof(buf), MSG_DONTWAIT,
                                 (struct sockaddr *) &from, &from_len);
            if (n < 0) {
                break;
            }
            quiche_recv_info info = {
                .from = (struct sockaddr *) &from,
                .from_len = from_len,
                .to = (struct sockaddr *) &local,
                .to_len = local_len,
            };
            ssize_t done = quiche_conn_recv(conn, buf, (size_t) n, &info);
            if (done < 0) {
                fprintf(stderr, "download: error: quiche_conn_recv failed: %zd\n", done);
                return 1;
            }
        }

        if (quiche_conn_is_established(conn) && !requested) {
            uint64_t error_code;
            /* A download's request is the stream's only data: FIN with it. */
            if (quiche_conn_stream_send(conn, DATA_STREAM, (const uint8_t *) request,
                                        (size_t) request_len, true, &error_code) != request_len) {
                return fail("cannot send the request");
            }
            requested = true;
        }

        bool fin = false;
        uint64_t error_code;
        ssize_t n;
        while (!finished &&
               (n = quiche_conn_stream_recv(conn, DATA_STREAM, buf, sizeof(buf), &fin,
                                            &error_code)) > 0) {
            for (ssize_t i = 0; i < n; i++) {
                if (buf[i] != pattern(received + (uint64_t) i)) {
                    fprintf(stderr, "download: error: byte %" PRIu64 " is not the pattern\n",
                            received + (uint64_t) i);
                    return 1;
                }
            }
            received += (uint64_t) n;
            if (fin) {
                finished = true;
                quiche_conn_close(conn, true, CLOSE_DONE, (const uint8_t *) "done", 4);
            }
        }

        if (flush(conn, sock) != 0) {
            return 1;
        }
    }

    if (!finished) {
        fprintf(stderr, "download: error: connection closed after %" PRIu64 " of %llu bytes\n",
                received, bytes);
        return 1;
    }
    if (received != bytes) {
        fprintf(stderr, "download: error: received %" PRIu64 " bytes, asked for %llu\n", received,
                bytes);
        return 1;
    }
    printf("downloaded %" PRIu64 " bytes with ledbatpp\n", received);
    quiche_conn_free(conn);
    quiche_config_free(config);
    close(sock);
    return 0;
}
