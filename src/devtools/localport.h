#pragma once

#include <QHostAddress>
#include <QTcpServer>

namespace outbox::devtools {

// A TCP port on 127.0.0.1 where nothing listens (bound, then released): a
// destination or database that refuses connections.
inline int closedPort() {
    QTcpServer server;
    if (!server.listen(QHostAddress::LocalHost, 0))
        return 1;
    const int port = server.serverPort();
    server.close();
    return port;
}

} // namespace outbox::devtools
