#pragma once

#include "store/eventfilter.h"
#include "store/queries.h"

#include <QDateTime>
#include <QList>
#include <QTimer>
#include <QWidget>

#include <memory>

namespace Ui {
class FilterBar;
}

namespace outbox::console {

// The filter above the event tables: free text, namespace, topic, tenant,
// payload containment (JSON, checked as typed: an invalid one is named
// beside the field and left out), a time range, and the error group picked
// in the error groups view. The
// status comes from the page; filter() leaves it empty. Typing is debounced,
// so filterChanged() fires once per pause, not per key.
class FilterBar final : public QWidget {
    Q_OBJECT

public:
    explicit FilterBar(QWidget *parent = nullptr);
    ~FilterBar() override;
    Q_DISABLE_COPY_MOVE(FilterBar)

    store::EventFilter filter() const;
    // False while an entry cannot be used (e.g. a malformed tenant id); the
    // filter then leaves that entry out and the field says why.
    bool isValid() const { return m_problem.isEmpty(); }
    QString problem() const { return m_problem; }

    // Offers the namespaces and topics that have live events.
    void setKnownTopics(const QList<store::TopicCount> &topics);

    void setText(const QString &text);
    void setPayloadContains(const QString &json);
    void setNamespace(const QString &nameSpace);
    void setTopic(const QString &topic);
    void setErrorSignature(const QString &signature);
    QString errorSignature() const { return m_errorSignature; }
    void clear();
    void focusSearch();

Q_SIGNALS:
    void filterChanged();

private:
    enum TimeRange { AnyTime, Last15Minutes, LastHour, Last24Hours, Last7Days, Custom };

    void scheduleChange(int delayMs);
    void onTimeRangeChosen(int index);
    void validate();
    void updateErrorChip();
    void updateTopics();

    std::unique_ptr<Ui::FilterBar> m_ui;
    QTimer m_debounce;
    QList<store::TopicCount> m_topics;
    QDateTime m_rangeFrom; // for the relative ranges
    QString m_errorSignature;
    QString m_problem;
    store::EventFilter m_lastEmitted;
};

} // namespace outbox::console
