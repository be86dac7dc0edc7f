#pragma once

#include "core/result.h"

#include <QByteArray>
#include <QList>

namespace outbox::devtools {

// The development runner's side of the batch format (the delivery contract
// in docs/RUNNER-CONTRACT.md): which events a batch request carries, and the answer that
// lists the ones it fails.

// How the runner answered one batch request.
struct BatchAnswer {
    int status = 200;
    QByteArray body;
    QList<QByteArray> delivered; // ids answered as delivered
    qint64 failed = 0;           // events listed as failed
};

// The "id" of every element of a batch body {"events": [...]}, in order; an
// error naming what is wrong when the body is not such a batch (a check of
// the structure, not a full JSON validation).
core::Result<QList<QByteArray>> batchEventIds(const QByteArray &body);

// The answer to a batch whose events `failed` are failed on purpose:
// {"failed": [{"id", "error", "permanent", "retry_after"}]}, retry_after only
// when `retryAfterSeconds` is not negative.
QByteArray batchAnswer(const QList<QByteArray> &failed, bool permanent, qint64 retryAfterSeconds);

} // namespace outbox::devtools
