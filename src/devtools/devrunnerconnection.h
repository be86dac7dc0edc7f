#pragma once

#include "devtools/devrunner.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>

class QTcpSocket;

namespace outbox::devtools {

// One client connection of the DevRunner: parses requests from a buffer
// (pipelined requests wait their turn) and answers them one at a time, in
// order. Owned by the runner; deletes itself when the client disconnects.
class DevRunnerConnection final : public QObject {
public:
    DevRunnerConnection(DevRunner *runner, QTcpSocket *socket);
    ~DevRunnerConnection() override;
    Q_DISABLE_COPY_MOVE(DevRunnerConnection)

private:
    enum class Parse { Incomplete, Complete, Error };

    void onReadyRead();
    Parse parse(DevRunnerRequest &request, int &errorStatus);
    void processNext();
    void write(int status, const QByteArray &body,
               const QList<QPair<QByteArray, QByteArray>> &headers,
               QByteArrayView contentType = "text/plain; charset=utf-8");

    DevRunner *m_runner;
    QTcpSocket *m_socket;
    QByteArray m_buffer;
    bool m_busy = false;
    bool m_keepAlive = true;
    bool m_http10 = false;
};

} // namespace outbox::devtools
