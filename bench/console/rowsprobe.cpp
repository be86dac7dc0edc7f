#include "rowsprobe.h"

#include "benchapplication.h"
#include "console/model/eventtablemodel.h"
#include "console/widgets/eventview.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QTableView>
#include <QTimer>

#include <algorithm>

namespace outbox::consolebench {

RowsProbe::RowsProbe(BenchApplication *app, console::EventView *view, qint64 t0)
    : m_app(app)
    , m_view(view)
    , m_t0(t0) {
    m_app->setPaintHook([this](QWidget *widget) { onPaint(widget); });
    const console::EventTableModel *model = m_view->model();
    connect(model, &QAbstractItemModel::rowsInserted, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::rowsMoved, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::modelReset, this, &RowsProbe::markDirty);
    connect(model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &, const QModelIndex &, const QList<int> &roles) {
                // The once-a-second clock names its roles; a row that changed
                // in a refresh does not.
                if (roles.isEmpty()) {
                    markDirty();
                }
            });
    connect(model, &console::EventTableModel::refreshed, this, [this] {
        if (!m_refreshedAt) {
            m_refreshedAt = m_app->now();
            m_dirtyAtRefresh = m_dirty;
        }
    });
    connect(model, &console::EventTableModel::loadFailed, this,
            [this](const QString &message) { m_loadError = message; });
}

RowsProbe::~RowsProbe() {
    m_app->setPaintHook({});
}

void RowsProbe::markDirty() {
    m_dirty = true;
}

void RowsProbe::onPaint(QWidget *widget) {
    const qint64 at = m_app->now();
    if (!m_firstFrameAt) {
        m_firstFrameAt = at;
    }
    if (widget != m_view->table()->viewport()) {
        return;
    }
    const bool hasRows = m_view->model()->rowCount() > 0;
    if (hasRows && !m_shownAt) {
        m_shownAt = at;
    }
    if (m_refreshedAt && !m_paintAfterRefresh) {
        m_paintAfterRefresh = at;
    }
}

std::optional<qint64> RowsProbe::freshAt() const {
    if (!m_refreshedAt) {
        return std::nullopt;
    }
    qint64 at = *m_refreshedAt;
    const bool hasRows = m_view->model()->rowCount() > 0;
    if (m_dirtyAtRefresh || (hasRows && !m_shownAt)) {
        if (!m_paintAfterRefresh) {
            return std::nullopt;
        }
        at = *m_paintAfterRefresh;
    }
    if (hasRows) {
        if (!m_shownAt) {
            return std::nullopt;
        }
        at = std::max(at, *m_shownAt);
    }
    return at;
}

double RowsProbe::shownMs() const {
    return m_shownAt ? double(*m_shownAt - m_t0) / 1e6 : -1.0;
}

double RowsProbe::freshMs() const {
    const auto at = freshAt();
    return at ? double(*at - m_t0) / 1e6 : -1.0;
}

bool waitUntil(const std::function<bool()> &done, int timeoutMs) {
    if (done()) {
        return true;
    }
    QElapsedTimer clock;
    clock.start();
    QEventLoop loop;
    QTimer poll;
    // Polling only decides when to stop waiting; the figures are taken in
    // the paint and signal handlers, so its period does not bias them.
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done() || clock.elapsed() >= timeoutMs) {
            loop.quit();
        }
    });
    poll.start(2);
    loop.exec();
    return done();
}

void runFor(int ms) {
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace outbox::consolebench
