// One small MQTT client API for Swift over libmosquitto, driven from the caller's own poll loop:
// the caller polls `rb_mqtt_socket` (POLLOUT too while `rb_mqtt_want_write`), calls
// `rb_mqtt_read`/`rb_mqtt_write` when it is ready and `rb_mqtt_misc` when the keepalive is due
// (a PINGREQ when nothing was read or written for a keepalive, the end of the connection when a
// PINGREQ's answer did not come within one).
// No library thread is ever started. libmosquitto's callbacks only record what happened (the
// CONNACK code, a disconnection, received messages in a bounded ring); the caller takes them with
// the `rb_mqtt_take_*` functions after each call. This header deliberately does not include
// mosquitto.h: Swift sees only these declarations.
//
// Conventions: functions returning int return a libmosquitto error code (0 = MOSQ_ERR_SUCCESS);
// with RB_MQTT_ERR_ERRNO the cause is in errno. Nothing here prints or aborts.
#ifndef RB_MQTT_H
#define RB_MQTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// MOSQ_ERR_ERRNO: a system call failed, errno says why.
#define RB_MQTT_ERR_ERRNO 14
/// The longest topic and payload a received message may have; longer ones are dropped and counted.
#define RB_MQTT_TOPIC_MAX 256
#define RB_MQTT_PAYLOAD_MAX 256
/// The largest packet the broker may send us (MQTT v5 CONNECT Maximum Packet Size): a message of
/// the longest topic and payload with room for its header and properties. Larger ones the broker
/// drops without sending.
#define RB_MQTT_PACKET_MAX 2048
/// Why a received message was dropped (rb_mqtt_take_drop).
#define RB_MQTT_DROP_NONE 0
#define RB_MQTT_DROP_TOPIC_TOO_LONG 1
#define RB_MQTT_DROP_PAYLOAD_TOO_LONG 2
#define RB_MQTT_DROP_RING_FULL 3
/// MOSQ_ERR_KEEPALIVE: the broker did not answer a PINGREQ within the keepalive.
#define RB_MQTT_ERR_KEEPALIVE 19
/// MQTT v5 CONNACK reason 0x84: the broker does not speak this protocol version.
#define RB_MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION 132
/// The longest error line kept from libmosquitto's log.
#define RB_MQTT_ERROR_MAX 256

typedef struct rb_mqtt rb_mqtt;

/// The linked library's version, e.g. 2000011 for 2.0.11.
int rb_mqtt_library_version(void);
/// A new client (clean session) with `client_id`, speaking MQTT v5 with the CONNECT property
/// Maximum Packet Size RB_MQTT_PACKET_MAX; NULL with errno set on failure.
rb_mqtt *rb_mqtt_new(const char *client_id);
/// Speaks MQTT v3.1.1 from the next connection on (a broker that answered
/// RB_MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION): no packet size bound, no retain handling.
int rb_mqtt_use_v311(rb_mqtt *client);
bool rb_mqtt_is_v5(rb_mqtt *client);
void rb_mqtt_free(rb_mqtt *client);
int rb_mqtt_set_credentials(rb_mqtt *client, const char *username, const char *password);
/// TLS with `ca_file`; `cert_file` and `key_file` NULL or both set (a client certificate).
int rb_mqtt_set_tls(rb_mqtt *client, const char *ca_file, const char *cert_file, const char *key_file);
/// The last will: published by the broker when the connection ends without a DISCONNECT.
int rb_mqtt_set_will(rb_mqtt *client, const char *topic, const void *payload, int length, int qos, bool retain);
/// Starts connecting without waiting for the broker (the name lookup may block: use an address or
/// a name /etc/hosts knows for a fully non-blocking start). The first call connects, later ones
/// reconnect.
int rb_mqtt_connect(rb_mqtt *client, const char *host, int port, int keepalive_seconds);
/// The socket to poll; -1 when not connected.
int rb_mqtt_socket(rb_mqtt *client);
/// True while libmosquitto has bytes to write (poll for POLLOUT).
bool rb_mqtt_want_write(rb_mqtt *client);
int rb_mqtt_read(rb_mqtt *client);
int rb_mqtt_write(rb_mqtt *client);
int rb_mqtt_misc(rb_mqtt *client);
int rb_mqtt_publish(rb_mqtt *client, const char *topic, const void *payload, int length, int qos, bool retain);
/// Subscribes; with `retained_too` false and MQTT v5 the broker is asked never to send the
/// topic's retained message (retain handling 2), with v3.1.1 it still may (see `retained` of
/// rb_mqtt_take_message).
int rb_mqtt_subscribe(rb_mqtt *client, const char *topic, int qos, bool retained_too);
/// Sends DISCONNECT (the will is then not published).
int rb_mqtt_disconnect(rb_mqtt *client);
const char *rb_mqtt_error_string(int code);
/// The broker's CONNACK return code (v3.1.1) or reason code (v5) in words ("Not authorized").
const char *rb_mqtt_connack_string(rb_mqtt *client, int code);

/// The CONNACK code received since the last call, or -1 when none came.
int rb_mqtt_take_connack(rb_mqtt *client);
/// True once when the connection ended since the last call (`*code` the libmosquitto reason).
bool rb_mqtt_take_disconnect(rb_mqtt *client, int *code);
/// Takes the oldest received message: 1 and fills the buffers (topic NUL-terminated), 0 when none.
/// `*retained`: the broker delivered it as a retained message (one kept from before, sent because
/// of the subscription), not as it was published.
int rb_mqtt_take_message(rb_mqtt *client, char topic[RB_MQTT_TOPIC_MAX + 1], uint8_t payload[RB_MQTT_PAYLOAD_MAX],
                         size_t *payload_length, bool *retained);
/// Takes the oldest report of a dropped message: its reason (RB_MQTT_DROP_*), the first
/// RB_MQTT_TOPIC_MAX bytes of its topic (NUL-terminated), the topic's and the payload's full
/// lengths; RB_MQTT_DROP_NONE when none is left.
int rb_mqtt_take_drop(rb_mqtt *client, char topic[RB_MQTT_TOPIC_MAX + 1], size_t *topic_length, size_t *payload_length);
/// Messages dropped without a report (the reports' ring was full) since the last call.
uint64_t rb_mqtt_take_unreported_drops(rb_mqtt *client);
/// Takes libmosquitto's last error log line since the last call (OpenSSL's reason for a TLS
/// failure: "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed"); false when
/// none was logged.
bool rb_mqtt_take_error_log(rb_mqtt *client, char text[RB_MQTT_ERROR_MAX]);
/// Received messages dropped so far (too long, or the ring was full).
uint64_t rb_mqtt_dropped_messages(rb_mqtt *client);

#endif
