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

class QHBoxLayout;

namespace outbox::console {

class FilterState;

// The filter above the event tables: free text, namespace, topic, tenant,
// trace id, payload containment (JSON, checked as typed: an invalid one is named
// beside the field and left out), a time range, and a chip for the error
// group picked in the error groups view. Its fields are its own piece of
// the console's FilterState: typing is passed on after a pause (once per
// pause, not per key), a choice at once; what others change in the state
// (the navigator's namespace, the error group, Clear) comes back through
// FilterState::changed and is shown without being passed on again.
class FilterBar final : public QWidget {
    Q_OBJECT

public:
    explicit FilterBar(FilterState *state, QWidget *parent = nullptr);
    ~FilterBar() override;
    Q_DISABLE_COPY_MOVE(FilterBar)

    // What the fields say now, typing not yet passed on included. The
    // status and the navigator's places are not the bar's: left empty.
    store::EventFilter filter() const;
    // False while an entry cannot be used (e.g. a malformed tenant id); the
    // filter then leaves that entry out and the field says why.
    bool isValid() const { return m_problem.isEmpty(); }
    QString problem() const { return m_problem; }

    // Offers the namespaces and topics that have live events.
    void setKnownTopics(const QList<store::TopicCount> &topics);

    // Puts a value in a field and passes it on at once.
    void setText(const QString &text);
    void setPayloadContains(const QString &json);
    void setNamespace(const QString &nameSpace);
    void setTopic(const QString &topic);
    // The error group its chip shows: the one the console's filter narrows to.
    QString errorSignature() const;
    // Clears every field and the whole filter but the status page.
    void clear();
    void focusSearch();

    // In two rows (narrow: a laptop with panes beside the tables) the
    // least width is the wider row's, so the window can give it that.
    QSize minimumSizeHint() const override;
    bool isInTwoRows() const { return m_twoRows; }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;

private:
    enum TimeRange { AnyTime, Last15Minutes, LastHour, Last24Hours, Last7Days, Custom };

    void scheduleChange(int delayMs);
    // Passes on the fields that differ from what the state last said.
    void commit();
    // Shows what the state says where it differs from what it said before.
    void showState(const store::EventFilter &filter);
    void onTimeRangeChosen(int index);
    void validate();
    void updateErrorChip();
    // The chip's text elided (at its end) to fit `width`.
    void setChipText(int width);
    void updateTopics();
    // The fields in one row, or in two (the precise ones below) when one
    // row does not fit `width`.
    void arrangeRows(int width);
    int rowMinimumWidth(const QList<QWidget *> &fields) const;

    FilterState *m_state;
    std::unique_ptr<Ui::FilterBar> m_ui;
    QTimer m_debounce;
    QHBoxLayout *m_firstRow = nullptr;
    QHBoxLayout *m_secondRow = nullptr;
    QList<QWidget *> m_mainFields;    // search ... clear: always the first row
    QList<QWidget *> m_preciseFields; // tenant, trace, payload, error chip
    bool m_twoRows = false;
    QList<store::TopicCount> m_topics;
    QDateTime m_rangeFrom; // for the relative ranges
    QString m_problem;
    store::EventFilter m_shown; // the state as last shown
};

} // namespace outbox::console
