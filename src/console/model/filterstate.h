#pragma once

#include "core/status.h"
#include "store/eventfilter.h"

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QUuid>

#include <optional>

namespace outbox::console {

// The console's one current filter: the status page, what the navigator
// picks under it (retrying, blocked by aggregate order, namespace, topic),
// the filter bar's search fields (the trace id among them) and the error
// group. The filter bar, the
// navigator, the status tabs and the error groups each write their piece
// here and show what changed() says; none of them writes into another's
// controls, and the window loads the page and the error groups from
// changed() alone.
//
// Setters record at once (filter() has the new value) and announce later:
// changed() comes once per pass of the event loop however many setters ran,
// and not at all when the filter ends up where it was. A part that shows the
// announced value therefore never starts a second round by setting it again.
class FilterState final : public QObject {
    Q_OBJECT

public:
    explicit FilterState(QObject *parent = nullptr);
    Q_DISABLE_COPY_MOVE(FilterState)

    // What the current page shows; its status is always set (Pending first).
    const store::EventFilter &filter() const { return m_filter; }

    // A status page. Retrying and blocked are places under Pending: another
    // status leaves them.
    void setStatus(core::Status status);
    // A place in the navigator: its status, retrying, blocked, namespace and
    // topic (empty ones clear); the other fields stay.
    void setPlace(const store::EventFilter &place);
    void setNamespace(const QString &nameSpace);
    void setTopic(const QString &topic);
    void setText(const QString &text);
    void setTenant(const std::optional<QUuid> &tenant);
    // A W3C trace id (32 hex digits, store::traceIdProblem()); empty clears.
    void setTraceId(const QString &traceId);
    void setPayloadContains(const QString &json);
    // Created in [from, to); an invalid end is open.
    void setCreatedRange(const QDateTime &from, const QDateTime &to);
    void setErrorSignature(const QString &signature);
    // Every field but the status page.
    void clear();

Q_SIGNALS:
    void changed(const outbox::store::EventFilter &filter);

private:
    template <typename T> void set(T store::EventFilter::*field, const T &value);
    void scheduleAnnouncement();
    void announce();

    store::EventFilter m_filter;
    store::EventFilter m_announced;
    bool m_scheduled = false;
};

} // namespace outbox::console
