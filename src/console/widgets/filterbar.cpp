#include "console/widgets/filterbar.h"

#include "console/model/filterstate.h"
#include "core/uuidtext.h"
#include "ui_filterbar.h"

#include <QEvent>
#include <QIcon>
#include <QResizeEvent>
#include <QSet>
#include <QTimer>
#include <QUuid>
#include <QVBoxLayout>

#include <limits>

namespace outbox::console {

namespace {

constexpr int kTypingDelayMs = 300;
// The error chip's width is bounded and its text elided, and it keeps its
// place while hidden: choosing or removing an error group never changes what
// the filter bar needs, so the panes beside it never move.
constexpr int kChipMinimumWidth = 120; // "Error: up…": enough to tell groups apart
constexpr int kChipMaximumWidth = 260;

QString comboValue(const QComboBox *combo) {
    // Index 0 is "All ..."; an edited text that matches it means no filter.
    const QString text = combo->currentText().trimmed();
    return text == combo->itemText(0) ? QString() : text;
}

void setComboValue(QComboBox *combo, const QString &value) {
    if (value.isEmpty()) {
        combo->setCurrentIndex(0);
        return;
    }
    const int index = combo->findText(value);
    if (index >= 0) {
        combo->setCurrentIndex(index);
    } else {
        combo->setEditText(value);
    }
}

} // namespace

FilterBar::FilterBar(FilterState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_ui(std::make_unique<Ui::FilterBar>()) {
    m_ui->setupUi(this);
    setObjectName(QStringLiteral("filterBar"));
    m_debounce.setSingleShot(true);
    connect(&m_debounce, &QTimer::timeout, this, &FilterBar::commit);

    m_ui->namespaceCombo->addItem(tr("All namespaces"));
    m_ui->topicCombo->addItem(tr("All topics"));
    m_ui->namespaceCombo->setInsertPolicy(QComboBox::NoInsert);
    m_ui->topicCombo->setInsertPolicy(QComboBox::NoInsert);
    m_ui->timeCombo->addItems({tr("Any time"), tr("Last 15 minutes"), tr("Last hour"),
                               tr("Last 24 hours"), tr("Last 7 days"), tr("Custom range…")});
    const QDateTime now = QDateTime::currentDateTime();
    m_ui->fromEdit->setDateTime(now.addDays(-1));
    m_ui->toEdit->setDateTime(now.addSecs(3600));
    m_ui->fromEdit->hide();
    m_ui->toEdit->hide();
    m_ui->errorChip->setIcon(QIcon(QStringLiteral(":/icons/close.svg")));
    m_ui->errorChip->setLayoutDirection(Qt::RightToLeft); // the ✕ after the text
    QSizePolicy chipPolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    chipPolicy.setRetainSizeWhenHidden(true);
    m_ui->errorChip->setSizePolicy(chipPolicy);
    m_ui->errorChip->setMinimumWidth(kChipMinimumWidth);
    m_ui->errorChip->setMaximumWidth(kChipMaximumWidth);
    m_ui->errorChip->hide();
    // Squeezed by the layout, the chip's text is elided here, at its end, to
    // the width it got; the style would cut out its middle ("Er…us").
    m_ui->errorChip->installEventFilter(this);
    m_ui->payloadProblem->hide();
    validate();

    // The form's one row becomes two rows that arrangeRows() fills.
    m_mainFields = {m_ui->searchEdit, m_ui->namespaceCombo, m_ui->topicCombo, m_ui->timeCombo,
                    m_ui->fromEdit,   m_ui->toEdit,         m_ui->clearButton};
    m_preciseFields = {m_ui->tenantEdit, m_ui->traceEdit, m_ui->payloadFilter, m_ui->payloadProblem,
                       m_ui->errorChip};
    const QMargins margins = m_ui->layout->contentsMargins();
    const int spacing = m_ui->layout->spacing();
    delete m_ui->layout; // its widgets stay children of this bar
    m_ui->layout = nullptr;
    auto *rows = new QVBoxLayout(this);
    rows->setContentsMargins(margins);
    rows->setSpacing(spacing);
    m_firstRow = new QHBoxLayout;
    m_secondRow = new QHBoxLayout;
    m_firstRow->setSpacing(spacing);
    m_secondRow->setSpacing(spacing);
    rows->addLayout(m_firstRow);
    rows->addLayout(m_secondRow);
    m_twoRows = true; // so that the first arrangement fills the one row
    arrangeRows(std::numeric_limits<int>::max());

    connect(m_ui->searchEdit, &QLineEdit::textChanged, this,
            [this] { scheduleChange(kTypingDelayMs); });
    connect(m_ui->tenantEdit, &QLineEdit::textChanged, this, [this] {
        validate();
        scheduleChange(kTypingDelayMs);
    });
    connect(m_ui->payloadFilter, &QLineEdit::textChanged, this, [this] {
        validate();
        scheduleChange(kTypingDelayMs);
    });
    connect(m_ui->traceEdit, &QLineEdit::textChanged, this, [this] {
        validate();
        scheduleChange(kTypingDelayMs);
    });
    connect(m_ui->namespaceCombo, &QComboBox::currentTextChanged, this, [this] {
        updateTopics();
        scheduleChange(kTypingDelayMs);
    });
    connect(m_ui->topicCombo, &QComboBox::currentTextChanged, this,
            [this] { scheduleChange(kTypingDelayMs); });
    connect(m_ui->timeCombo, &QComboBox::activated, this, &FilterBar::onTimeRangeChosen);
    connect(m_ui->fromEdit, &QDateTimeEdit::dateTimeChanged, this,
            [this] { scheduleChange(kTypingDelayMs); });
    connect(m_ui->toEdit, &QDateTimeEdit::dateTimeChanged, this,
            [this] { scheduleChange(kTypingDelayMs); });
    connect(m_ui->errorChip, &QToolButton::clicked, this,
            [this] { m_state->setErrorSignature({}); });
    connect(m_ui->clearButton, &QToolButton::clicked, this, &FilterBar::clear);
    connect(m_state, &FilterState::changed, this, &FilterBar::showState);
    showState(m_state->filter());
}

FilterBar::~FilterBar() = default;

store::EventFilter FilterBar::filter() const {
    store::EventFilter f;
    f.text = m_ui->searchEdit->text().trimmed();
    f.nameSpace = comboValue(m_ui->namespaceCombo);
    f.topic = comboValue(m_ui->topicCombo);
    const QUuid tenant = QUuid::fromString(m_ui->tenantEdit->text().trimmed());
    if (!tenant.isNull()) {
        f.tenantId = tenant;
    }
    const QString trace = m_ui->traceEdit->text();
    if (store::traceIdProblem(trace).isEmpty()) {
        f.traceId = store::normalizedTraceId(trace);
    }
    const QString payload = m_ui->payloadFilter->text().trimmed();
    if (store::payloadFilterProblem(payload).isEmpty()) {
        f.payloadContains = payload;
    }
    switch (m_ui->timeCombo->currentIndex()) {
    case AnyTime:
        break;
    case Custom:
        f.createdFrom = m_ui->fromEdit->dateTime().toUTC();
        f.createdTo = m_ui->toEdit->dateTime().toUTC();
        break;
    default:
        f.createdFrom = m_rangeFrom;
        break;
    }
    return f;
}

void FilterBar::scheduleChange(int delayMs) {
    m_debounce.start(delayMs);
}

void FilterBar::commit() {
    m_debounce.stop();
    const store::EventFilter fields = filter();
    // Only what was edited here: a field that the state changed meanwhile
    // (its news still on the way) keeps the state's value.
    const auto edited = [&](auto field) { return !(fields.*field == m_shown.*field); };
    if (edited(&store::EventFilter::text)) {
        m_state->setText(fields.text);
    }
    if (edited(&store::EventFilter::nameSpace)) {
        m_state->setNamespace(fields.nameSpace);
    }
    if (edited(&store::EventFilter::topic)) {
        m_state->setTopic(fields.topic);
    }
    if (edited(&store::EventFilter::tenantId)) {
        m_state->setTenant(fields.tenantId);
    }
    if (edited(&store::EventFilter::payloadContains)) {
        m_state->setPayloadContains(fields.payloadContains);
    }
    if (edited(&store::EventFilter::traceId)) {
        m_state->setTraceId(fields.traceId);
    }
    if (edited(&store::EventFilter::createdFrom) || edited(&store::EventFilter::createdTo)) {
        m_state->setCreatedRange(fields.createdFrom, fields.createdTo);
    }
}

void FilterBar::showState(const store::EventFilter &state) {
    const store::EventFilter fields = filter();
    // A field follows the state unless it holds an edit of its own that is
    // still to be passed on (that edit then follows, and wins). Set with
    // signals blocked: what comes from the state is not passed on again.
    const auto follows = [&](auto field) {
        return !(fields.*field == state.*field) && fields.*field == m_shown.*field;
    };
    if (follows(&store::EventFilter::text)) {
        const QSignalBlocker block(m_ui->searchEdit);
        m_ui->searchEdit->setText(state.text);
    }
    if (follows(&store::EventFilter::nameSpace)) {
        const QSignalBlocker block(m_ui->namespaceCombo);
        setComboValue(m_ui->namespaceCombo, state.nameSpace);
        updateTopics();
    }
    if (follows(&store::EventFilter::topic)) {
        const QSignalBlocker block(m_ui->topicCombo);
        setComboValue(m_ui->topicCombo, state.topic);
    }
    if (follows(&store::EventFilter::tenantId)) {
        const QSignalBlocker block(m_ui->tenantEdit);
        m_ui->tenantEdit->setText(state.tenantId ? core::uuidText(*state.tenantId) : QString());
    }
    if (follows(&store::EventFilter::payloadContains)) {
        const QSignalBlocker block(m_ui->payloadFilter);
        m_ui->payloadFilter->setText(state.payloadContains);
    }
    if (follows(&store::EventFilter::traceId)) {
        const QSignalBlocker block(m_ui->traceEdit);
        m_ui->traceEdit->setText(state.traceId);
    }
    if (follows(&store::EventFilter::createdFrom) || follows(&store::EventFilter::createdTo)) {
        const bool any = state.createdFrom.isValid() || state.createdTo.isValid();
        const QSignalBlocker block1(m_ui->fromEdit);
        const QSignalBlocker block2(m_ui->toEdit);
        m_ui->timeCombo->setCurrentIndex(any ? Custom : AnyTime);
        m_rangeFrom = {};
        if (any) {
            m_ui->fromEdit->setDateTime(state.createdFrom.toLocalTime());
            m_ui->toEdit->setDateTime(state.createdTo.toLocalTime());
        }
        m_ui->fromEdit->setVisible(any);
        m_ui->toEdit->setVisible(any);
    }
    m_shown = state;
    validate();
    updateErrorChip();
}

void FilterBar::onTimeRangeChosen(int index) {
    const QDateTime now = QDateTime::currentDateTimeUtc();
    switch (index) {
    case Last15Minutes:
        m_rangeFrom = now.addSecs(-15 * 60);
        break;
    case LastHour:
        m_rangeFrom = now.addSecs(-3600);
        break;
    case Last24Hours:
        m_rangeFrom = now.addDays(-1);
        break;
    case Last7Days:
        m_rangeFrom = now.addDays(-7);
        break;
    default:
        m_rangeFrom = {};
        break;
    }
    const bool custom = index == Custom;
    m_ui->fromEdit->setVisible(custom);
    m_ui->toEdit->setVisible(custom);
    m_ui->timeCombo->setToolTip(
        m_rangeFrom.isValid()
            ? tr("Created since %1 (choose the range again to move it to now)")
                  .arg(m_rangeFrom.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")))
            : tr("Only events created in this time range"));
    commit();
}

void FilterBar::validate() {
    const QString error = QStringLiteral("QLineEdit { background: #ffd7d7; }");
    QStringList problems;
    const QString tenant = m_ui->tenantEdit->text().trimmed();
    if (!tenant.isEmpty() && QUuid::fromString(tenant).isNull()) {
        problems << tr("The tenant must be a UUID such as 0190c8e2-7c3a-7d2e-9a51-3f2b6c1d4e5f; "
                       "it is ignored until then.");
        m_ui->tenantEdit->setStyleSheet(error);
        m_ui->tenantEdit->setToolTip(problems.constLast());
    } else {
        m_ui->tenantEdit->setStyleSheet({});
        m_ui->tenantEdit->setToolTip(tr("Only events of this tenant (a UUID)"));
    }
    if (const QString trace = store::traceIdProblem(m_ui->traceEdit->text()); !trace.isEmpty()) {
        problems << tr("Trace id ignored: %1.").arg(trace);
        m_ui->traceEdit->setStyleSheet(error);
        m_ui->traceEdit->setToolTip(problems.constLast());
    } else {
        m_ui->traceEdit->setStyleSheet({});
        m_ui->traceEdit->setToolTip(tr("Only events of this W3C trace (32 hex digits)"));
    }
    // Said beside the field, not only in a tooltip: a payload filter that
    // is left out would otherwise look like one that matched nothing.
    const QString payload = store::payloadFilterProblem(m_ui->payloadFilter->text());
    if (!payload.isEmpty()) {
        const QString text = tr("Payload filter ignored: %1.").arg(payload);
        problems << text;
        m_ui->payloadFilter->setStyleSheet(error);
        m_ui->payloadFilter->setToolTip(text);
        m_ui->payloadProblem->setText(m_ui->payloadProblem->fontMetrics().elidedText(
            tr("Invalid JSON: %1").arg(payload), Qt::ElideRight,
            m_ui->payloadProblem->maximumWidth()));
        m_ui->payloadProblem->setToolTip(text);
    } else {
        m_ui->payloadFilter->setStyleSheet({});
        m_ui->payloadFilter->setToolTip(
            tr("Only events whose payload contains this JSON, e.g. {\"invoice_id\": 42} or "
               "{\"customer\": {\"id\": 7}}. Fast on the Pending and Dead pages; among "
               "processing and delivered events the search is bounded in time."));
        m_ui->payloadProblem->clear();
    }
    m_ui->payloadProblem->setVisible(!payload.isEmpty());
    m_problem = problems.join(QLatin1Char(' '));
}

void FilterBar::setKnownTopics(const QList<store::TopicCount> &topics) {
    m_topics = topics;
    QSet<QString> namespaces;
    for (const auto &t : topics) {
        namespaces.insert(t.nameSpace);
    }
    QStringList sorted(namespaces.cbegin(), namespaces.cend());
    sorted.sort();
    // Refill without touching what the user typed or chose.
    const QSignalBlocker block(m_ui->namespaceCombo);
    const QString current = m_ui->namespaceCombo->currentText();
    const int index = m_ui->namespaceCombo->currentIndex();
    while (m_ui->namespaceCombo->count() > 1) {
        m_ui->namespaceCombo->removeItem(1);
    }
    m_ui->namespaceCombo->addItems(sorted);
    if (index == 0 && current == m_ui->namespaceCombo->itemText(0)) {
        m_ui->namespaceCombo->setCurrentIndex(0);
    } else {
        setComboValue(m_ui->namespaceCombo, current);
    }
    updateTopics();
}

void FilterBar::updateTopics() {
    const QString nameSpace = comboValue(m_ui->namespaceCombo);
    QSet<QString> topics;
    for (const auto &t : std::as_const(m_topics)) {
        if (nameSpace.isEmpty() || t.nameSpace == nameSpace) {
            topics.insert(t.topic);
        }
    }
    QStringList sorted(topics.cbegin(), topics.cend());
    sorted.sort();
    const QSignalBlocker block(m_ui->topicCombo);
    const QString current = comboValue(m_ui->topicCombo);
    while (m_ui->topicCombo->count() > 1) {
        m_ui->topicCombo->removeItem(1);
    }
    m_ui->topicCombo->addItems(sorted);
    setComboValue(m_ui->topicCombo, current);
}

void FilterBar::setText(const QString &text) {
    m_ui->searchEdit->setText(text);
    commit();
}

void FilterBar::setPayloadContains(const QString &json) {
    m_ui->payloadFilter->setText(json);
    commit();
}

void FilterBar::setNamespace(const QString &nameSpace) {
    setComboValue(m_ui->namespaceCombo, nameSpace);
    commit();
}

void FilterBar::setTopic(const QString &topic) {
    setComboValue(m_ui->topicCombo, topic);
    commit();
}

QString FilterBar::errorSignature() const {
    return m_shown.errorSignature;
}

void FilterBar::updateErrorChip() {
    const QString &signature = m_shown.errorSignature;
    m_ui->errorChip->setVisible(!signature.isEmpty());
    // What it asks for: the text elided to the chip's largest width; the
    // layout may give it less (fitChipText).
    setChipText(kChipMaximumWidth);
    // When the layout cannot give it more, the chip keeps its width and gets
    // no resize: elide to that width once the layout has had its turn.
    QTimer::singleShot(0, this, [this] {
        if (m_ui->errorChip->isVisible() &&
            m_ui->errorChip->width() < m_ui->errorChip->sizeHint().width())
            setChipText(m_ui->errorChip->width());
    });
    m_ui->errorChip->setToolTip(
        tr("Only events whose error matches\n%1\nClick to remove this filter.").arg(signature));
}

void FilterBar::setChipText(int width) {
    const QString &signature = m_shown.errorSignature;
    // Room for the text: the chip less its icon and margins.
    const int room = width - m_ui->errorChip->iconSize().width() - 24;
    const QString text = signature.isEmpty()
                             ? QString()
                             : m_ui->errorChip->fontMetrics()
                                   .elidedText(tr("Error: %1").arg(signature), Qt::ElideRight, room)
                                   .replace(QLatin1Char('&'), QLatin1String("&&"));
    if (text != m_ui->errorChip->text()) {
        m_ui->errorChip->setText(text);
    }
}

bool FilterBar::eventFilter(QObject *watched, QEvent *event) {
    if (watched == m_ui->errorChip && event->type() == QEvent::Resize &&
        m_ui->errorChip->width() < m_ui->errorChip->sizeHint().width()) {
        setChipText(m_ui->errorChip->width());
    }
    return QWidget::eventFilter(watched, event);
}

void FilterBar::resizeEvent(QResizeEvent *event) {
    QWidget::resizeEvent(event);
    arrangeRows(event->size().width());
    updateErrorChip(); // more room, maybe: ask for it again
}

int FilterBar::rowMinimumWidth(const QList<QWidget *> &fields) const {
    int width = 0;
    int shown = 0;
    for (const QWidget *field : fields) {
        // The chip keeps its room while hidden (no jump when it appears).
        if (field->isHidden() && !field->sizePolicy().retainSizeWhenHidden())
            continue;
        width += std::max(field->minimumSizeHint().width(), field->minimumWidth());
        ++shown;
    }
    const QMargins margins = layout()->contentsMargins();
    return width + std::max(shown - 1, 0) * layout()->spacing() + margins.left() + margins.right();
}

QSize FilterBar::minimumSizeHint() const {
    const QSize rows = QWidget::minimumSizeHint();
    const int least = std::max(rowMinimumWidth(m_mainFields), rowMinimumWidth(m_preciseFields));
    return {least, rows.height()};
}

void FilterBar::arrangeRows(int width) {
    const bool two = width < rowMinimumWidth(m_mainFields + m_preciseFields);
    if (two == m_twoRows)
        return;
    m_twoRows = two;
    const auto take = [](QHBoxLayout *row) {
        while (QLayoutItem *item = row->takeAt(0))
            delete item; // the widget items only; the widgets stay
    };
    take(m_firstRow);
    take(m_secondRow);
    // One row in the form's order; two rows: what narrows a search by its
    // exact values (tenant, trace, payload, error group) goes below.
    const QList<QWidget *> first =
        two ? m_mainFields
            : QList<QWidget *>{m_ui->searchEdit,     m_ui->namespaceCombo, m_ui->topicCombo,
                               m_ui->tenantEdit,     m_ui->traceEdit,      m_ui->payloadFilter,
                               m_ui->payloadProblem, m_ui->timeCombo,      m_ui->fromEdit,
                               m_ui->toEdit,         m_ui->errorChip,      m_ui->clearButton};
    for (QWidget *field : first)
        m_firstRow->addWidget(field);
    if (two) {
        for (QWidget *field : std::as_const(m_preciseFields))
            m_secondRow->addWidget(field);
        m_secondRow->addStretch(1);
    }
    // The search field takes what is left of its row.
    m_firstRow->setStretchFactor(m_ui->searchEdit, 1);
    updateGeometry();
}

void FilterBar::clear() {
    m_debounce.stop();
    {
        const QSignalBlocker b1(m_ui->searchEdit);
        const QSignalBlocker b2(m_ui->namespaceCombo);
        const QSignalBlocker b3(m_ui->topicCombo);
        const QSignalBlocker b4(m_ui->tenantEdit);
        const QSignalBlocker b5(m_ui->payloadFilter);
        const QSignalBlocker b6(m_ui->traceEdit);
        m_ui->payloadFilter->clear();
        m_ui->traceEdit->clear();
        m_ui->searchEdit->clear();
        m_ui->namespaceCombo->setCurrentIndex(0);
        m_ui->namespaceCombo->setEditText(m_ui->namespaceCombo->itemText(0));
        updateTopics();
        m_ui->topicCombo->setCurrentIndex(0);
        m_ui->topicCombo->setEditText(m_ui->topicCombo->itemText(0));
        m_ui->tenantEdit->clear();
    }
    m_ui->timeCombo->setCurrentIndex(AnyTime);
    m_rangeFrom = {};
    m_ui->fromEdit->hide();
    m_ui->toEdit->hide();
    validate();
    m_state->clear();
}

void FilterBar::focusSearch() {
    m_ui->searchEdit->setFocus(Qt::ShortcutFocusReason);
    m_ui->searchEdit->selectAll();
}

} // namespace outbox::console
