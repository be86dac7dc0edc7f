#include "console/model/filterstate.h"

#include <QMetaObject>

#include <utility>

namespace outbox::console {

FilterState::FilterState(QObject *parent)
    : QObject(parent) {
    m_filter.status = core::Status::Pending;
    m_announced = m_filter;
}

template <typename T> void FilterState::set(T store::EventFilter::*field, const T &value) {
    if (m_filter.*field == value) {
        return;
    }
    m_filter.*field = value;
    scheduleAnnouncement();
}

void FilterState::setStatus(core::Status status) {
    if (m_filter.status == status) {
        return;
    }
    set(&store::EventFilter::status, std::optional(status));
    set(&store::EventFilter::retrying, std::optional<bool>());
    set(&store::EventFilter::aggregateBlocked, false);
}

void FilterState::setPlace(const store::EventFilter &place) {
    if (place.status) {
        set(&store::EventFilter::status, place.status);
    }
    set(&store::EventFilter::retrying, place.retrying);
    set(&store::EventFilter::aggregateBlocked, place.aggregateBlocked);
    set(&store::EventFilter::nameSpace, place.nameSpace);
    set(&store::EventFilter::topic, place.topic);
}

void FilterState::setNamespace(const QString &nameSpace) {
    set(&store::EventFilter::nameSpace, nameSpace);
}

void FilterState::setTopic(const QString &topic) {
    set(&store::EventFilter::topic, topic);
}

void FilterState::setText(const QString &text) {
    set(&store::EventFilter::text, text);
}

void FilterState::setTenant(const std::optional<QUuid> &tenant) {
    set(&store::EventFilter::tenantId, tenant);
}

void FilterState::setTraceId(const QString &traceId) {
    set(&store::EventFilter::traceId, store::normalizedTraceId(traceId));
}

void FilterState::setPayloadContains(const QString &json) {
    set(&store::EventFilter::payloadContains, json);
}

void FilterState::setCreatedRange(const QDateTime &from, const QDateTime &to) {
    set(&store::EventFilter::createdFrom, from);
    set(&store::EventFilter::createdTo, to);
}

void FilterState::setErrorSignature(const QString &signature) {
    set(&store::EventFilter::errorSignature, signature);
}

void FilterState::clear() {
    store::EventFilter cleared;
    cleared.status = m_filter.status;
    if (!(cleared == m_filter)) {
        m_filter = cleared;
        scheduleAnnouncement();
    }
}

void FilterState::scheduleAnnouncement() {
    // Queued: every setter of this pass has run by the time it is delivered.
    if (!std::exchange(m_scheduled, true)) {
        QMetaObject::invokeMethod(this, &FilterState::announce, Qt::QueuedConnection);
    }
}

void FilterState::announce() {
    m_scheduled = false;
    if (m_filter == m_announced) {
        return; // changed and changed back
    }
    m_announced = m_filter;
    Q_EMIT changed(m_filter);
}

} // namespace outbox::console
