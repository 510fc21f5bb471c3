#include "rb_mqtt.h"

#include <errno.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Received messages wait here until Swift takes them after the read that delivered them; so do
// the reports of the ones dropped.
#define RB_MQTT_RING 16

struct rb_mqtt_message {
    char topic[RB_MQTT_TOPIC_MAX + 1];
    uint8_t payload[RB_MQTT_PAYLOAD_MAX];
    size_t length;
    bool retained;
};

struct rb_mqtt_drop {
    char topic[RB_MQTT_TOPIC_MAX + 1];  // its first RB_MQTT_TOPIC_MAX bytes
    size_t topic_length;
    size_t payload_length;
    int reason;
};

struct rb_mqtt {
    struct mosquitto *mosq;
    bool connected_once;
    int connack;           // -1: none pending
    bool disconnected;
    int disconnect_code;
    char last_error[RB_MQTT_ERROR_MAX];  // libmosquitto's last error log line ("" when none)
    struct rb_mqtt_message ring[RB_MQTT_RING];
    size_t head;           // oldest
    size_t count;
    uint64_t dropped;
    struct rb_mqtt_drop drops[RB_MQTT_RING];
    size_t drop_head;
    size_t drop_count;
    uint64_t drops_unreported;  // dropped while the reports' ring was full
    bool v5;
};

static void on_connect(struct mosquitto *mosq, void *obj, int code) {
    (void)mosq;
    ((rb_mqtt *)obj)->connack = code;
}

static void on_disconnect(struct mosquitto *mosq, void *obj, int code) {
    (void)mosq;
    rb_mqtt *client = obj;
    client->disconnected = true;
    client->disconnect_code = code;
}

static void on_log(struct mosquitto *mosq, void *obj, int level, const char *text) {
    (void)mosq;
    if (level != MOSQ_LOG_ERR || text == NULL) return;
    rb_mqtt *client = obj;
    snprintf(client->last_error, sizeof client->last_error, "%s", text);
}

static void on_message(struct mosquitto *mosq, void *obj, const struct mosquitto_message *message) {
    (void)mosq;
    rb_mqtt *client = obj;
    size_t topic_length = message->topic ? strlen(message->topic) : 0;
    size_t payload_length = message->payloadlen > 0 ? (size_t)message->payloadlen : 0;
    int reason = RB_MQTT_DROP_NONE;
    if (topic_length > RB_MQTT_TOPIC_MAX) {
        reason = RB_MQTT_DROP_TOPIC_TOO_LONG;
    } else if (payload_length > RB_MQTT_PAYLOAD_MAX) {
        reason = RB_MQTT_DROP_PAYLOAD_TOO_LONG;
    } else if (client->count == RB_MQTT_RING) {
        reason = RB_MQTT_DROP_RING_FULL;
    }
    if (reason != RB_MQTT_DROP_NONE) {
        client->dropped++;
        if (client->drop_count == RB_MQTT_RING) {
            client->drops_unreported++;
            return;
        }
        struct rb_mqtt_drop *drop = &client->drops[(client->drop_head + client->drop_count) % RB_MQTT_RING];
        size_t kept = topic_length > RB_MQTT_TOPIC_MAX ? RB_MQTT_TOPIC_MAX : topic_length;
        if (kept > 0) memcpy(drop->topic, message->topic, kept);
        drop->topic[kept] = '\0';
        drop->topic_length = topic_length;
        drop->payload_length = payload_length;
        drop->reason = reason;
        client->drop_count++;
        return;
    }
    struct rb_mqtt_message *slot = &client->ring[(client->head + client->count) % RB_MQTT_RING];
    memcpy(slot->topic, message->topic, topic_length);
    slot->topic[topic_length] = '\0';
    slot->length = payload_length;
    if (slot->length > 0) memcpy(slot->payload, message->payload, slot->length);
    slot->retained = message->retain;
    client->count++;
}

// Stores the CONNECT property Maximum Packet Size (MQTT v5, 3.1.2.11.4): the broker must not send
// a packet larger than that, so a huge PUBLISH is dropped by the broker instead of read whole into
// our memory (libmosquitto's client reads every packet whole and has no limit of its own).
// libmosquitto 2.0 keeps CONNECT properties only from mosquitto_connect_bind_v5, which connects
// blocking; it stores the properties before it checks the port, so a call with port -1 stores
// them and returns MOSQ_ERR_INVAL without any I/O (2.0.9 to 2.0.20 read alike), and the
// non-blocking connects send them. NULL clears them (for MQTT v3.1.1, which has no properties).
static int store_connect_properties(rb_mqtt *client, bool bounded) {
    mosquitto_property *properties = NULL;
    if (bounded) {
        int code = mosquitto_property_add_int32(&properties, MQTT_PROP_MAXIMUM_PACKET_SIZE, RB_MQTT_PACKET_MAX);
        if (code != MOSQ_ERR_SUCCESS) return code;
    }
    int code = mosquitto_connect_bind_v5(client->mosq, "localhost", -1, 60, NULL, properties);
    mosquitto_property_free_all(&properties);
    return code == MOSQ_ERR_INVAL ? MOSQ_ERR_SUCCESS : code;
}

int rb_mqtt_library_version(void) {
    int major = 0, minor = 0, revision = 0;
    mosquitto_lib_version(&major, &minor, &revision);
    return major * 1000000 + minor * 1000 + revision;
}

rb_mqtt *rb_mqtt_new(const char *client_id) {
    // A write to a socket the broker closed must fail with EPIPE, not end the process: OpenSSL
    // writes without MSG_NOSIGNAL. Commands we start get the default back (rb_spawn).
    signal(SIGPIPE, SIG_IGN);
    // Idempotent; without threads it only seeds what TLS needs.
    if (mosquitto_lib_init() != MOSQ_ERR_SUCCESS) {
        errno = ENOMEM;
        return NULL;
    }
    rb_mqtt *client = calloc(1, sizeof(*client));
    if (client == NULL) return NULL;
    client->connack = -1;
    client->mosq = mosquitto_new(client_id, true, client);
    if (client->mosq == NULL) {
        int saved = errno;
        free(client);
        errno = saved;
        return NULL;
    }
    mosquitto_connect_callback_set(client->mosq, on_connect);
    mosquitto_disconnect_callback_set(client->mosq, on_disconnect);
    mosquitto_message_callback_set(client->mosq, on_message);
    mosquitto_log_callback_set(client->mosq, on_log);
    if (mosquitto_int_option(client->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5) != MOSQ_ERR_SUCCESS ||
        store_connect_properties(client, true) != MOSQ_ERR_SUCCESS) {
        rb_mqtt_free(client);
        errno = ENOMEM;
        return NULL;
    }
    client->v5 = true;
    return client;
}

void rb_mqtt_free(rb_mqtt *client) {
    if (client == NULL) return;
    mosquitto_destroy(client->mosq);
    free(client);
}

int rb_mqtt_set_credentials(rb_mqtt *client, const char *username, const char *password) {
    return mosquitto_username_pw_set(client->mosq, username, password);
}

int rb_mqtt_set_tls(rb_mqtt *client, const char *ca_file, const char *cert_file, const char *key_file) {
    return mosquitto_tls_set(client->mosq, ca_file, NULL, cert_file, key_file, NULL);
}

int rb_mqtt_set_will(rb_mqtt *client, const char *topic, const void *payload, int length, int qos, bool retain) {
    return mosquitto_will_set(client->mosq, topic, length, payload, qos, retain);
}

int rb_mqtt_connect(rb_mqtt *client, const char *host, int port, int keepalive_seconds) {
    client->connack = -1;
    client->disconnected = false;
    if (!client->connected_once) {
        client->connected_once = true;
        return mosquitto_connect_async(client->mosq, host, port, keepalive_seconds);
    }
    return mosquitto_reconnect_async(client->mosq);
}

int rb_mqtt_socket(rb_mqtt *client) { return mosquitto_socket(client->mosq); }
bool rb_mqtt_want_write(rb_mqtt *client) { return mosquitto_want_write(client->mosq); }
int rb_mqtt_read(rb_mqtt *client) { return mosquitto_loop_read(client->mosq, 1); }
int rb_mqtt_write(rb_mqtt *client) { return mosquitto_loop_write(client->mosq, 1); }
int rb_mqtt_misc(rb_mqtt *client) { return mosquitto_loop_misc(client->mosq); }

int rb_mqtt_publish(rb_mqtt *client, const char *topic, const void *payload, int length, int qos, bool retain) {
    return mosquitto_publish(client->mosq, NULL, topic, length, payload, qos, retain);
}

int rb_mqtt_use_v311(rb_mqtt *client) {
    int code = store_connect_properties(client, false);
    if (code != MOSQ_ERR_SUCCESS) return code;
    code = mosquitto_int_option(client->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
    if (code == MOSQ_ERR_SUCCESS) client->v5 = false;
    return code;
}

bool rb_mqtt_is_v5(rb_mqtt *client) { return client->v5; }

int rb_mqtt_subscribe(rb_mqtt *client, const char *topic, int qos, bool retained_too) {
    if (!client->v5) return mosquitto_subscribe(client->mosq, NULL, topic, qos);
    int options = retained_too ? MQTT_SUB_OPT_SEND_RETAIN_ALWAYS : MQTT_SUB_OPT_SEND_RETAIN_NEVER;
    return mosquitto_subscribe_v5(client->mosq, NULL, topic, qos, options, NULL);
}

int rb_mqtt_disconnect(rb_mqtt *client) { return mosquitto_disconnect(client->mosq); }
const char *rb_mqtt_error_string(int code) { return mosquitto_strerror(code); }
const char *rb_mqtt_connack_string(rb_mqtt *client, int code) {
    return client->v5 ? mosquitto_reason_string(code) : mosquitto_connack_string(code);
}

int rb_mqtt_take_connack(rb_mqtt *client) {
    int code = client->connack;
    client->connack = -1;
    return code;
}

bool rb_mqtt_take_disconnect(rb_mqtt *client, int *code) {
    if (!client->disconnected) return false;
    client->disconnected = false;
    *code = client->disconnect_code;
    return true;
}

int rb_mqtt_take_message(rb_mqtt *client, char topic[RB_MQTT_TOPIC_MAX + 1], uint8_t payload[RB_MQTT_PAYLOAD_MAX],
                         size_t *payload_length, bool *retained) {
    if (client->count == 0) return 0;
    struct rb_mqtt_message *slot = &client->ring[client->head];
    memcpy(topic, slot->topic, strlen(slot->topic) + 1);
    if (slot->length > 0) memcpy(payload, slot->payload, slot->length);
    *payload_length = slot->length;
    *retained = slot->retained;
    client->head = (client->head + 1) % RB_MQTT_RING;
    client->count--;
    return 1;
}

uint64_t rb_mqtt_dropped_messages(rb_mqtt *client) { return client->dropped; }

int rb_mqtt_take_drop(rb_mqtt *client, char topic[RB_MQTT_TOPIC_MAX + 1], size_t *topic_length, size_t *payload_length) {
    if (client->drop_count == 0) return RB_MQTT_DROP_NONE;
    struct rb_mqtt_drop *drop = &client->drops[client->drop_head];
    memcpy(topic, drop->topic, strlen(drop->topic) + 1);
    *topic_length = drop->topic_length;
    *payload_length = drop->payload_length;
    client->drop_head = (client->drop_head + 1) % RB_MQTT_RING;
    client->drop_count--;
    return drop->reason;
}

uint64_t rb_mqtt_take_unreported_drops(rb_mqtt *client) {
    uint64_t count = client->drops_unreported;
    client->drops_unreported = 0;
    return count;
}

bool rb_mqtt_take_error_log(rb_mqtt *client, char text[RB_MQTT_ERROR_MAX]) {
    if (client->last_error[0] == '\0') return false;
    memcpy(text, client->last_error, sizeof client->last_error);
    client->last_error[0] = '\0';
    return true;
}
