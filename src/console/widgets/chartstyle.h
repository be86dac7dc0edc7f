#pragma once

#include <QColor>
#include <QString>

class QChart;
class QDateTimeAxis;
class QLineSeries;
class QValueAxis;

namespace outbox::console {

// The look the console's charts share (ThroughputChart, HistoryCharts).

// A compact chart: small title and legend, no margins, no animation.
QChart *makeChart(const QString &title);
// A line series added to `chart`.
QLineSeries *makeSeries(QChart *chart, const QString &name, const QColor &color);
// A time axis at the bottom and a value axis on the left, both added to
// `chart` with small labels and attached to every series it has so far.
void addTimeAxes(QChart *chart, QDateTimeAxis *&x, QValueAxis *&y, const QString &timeFormat,
                 const QString &labelFormat);
// A round upper bound, so an axis does not twitch with every sample.
double niceCeiling(double value);

} // namespace outbox::console
