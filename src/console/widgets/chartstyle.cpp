#include "console/widgets/chartstyle.h"

#include <QChart>
#include <QDateTimeAxis>
#include <QGraphicsLayout>
#include <QLineSeries>
#include <QValueAxis>

#include <cmath>

namespace outbox::console {

QLineSeries *makeSeries(QChart *chart, const QString &name, const QColor &color) {
    auto *series = new QLineSeries(chart);
    series->setName(name);
    QPen pen(color);
    pen.setWidthF(1.8);
    series->setPen(pen);
    chart->addSeries(series);
    return series;
}

QChart *makeChart(const QString &title) {
    auto *chart = new QChart;
    chart->setTitle(title);
    chart->setAnimationOptions(QChart::NoAnimation); // samples arrive every ~0.5 s
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setBackgroundRoundness(0);
    QFont titleFont = chart->titleFont();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 0.9);
    chart->setTitleFont(titleFont);
    QFont legendFont = chart->legend()->font();
    legendFont.setPointSizeF(legendFont.pointSizeF() * 0.85);
    chart->legend()->setFont(legendFont);
    return chart;
}

void addTimeAxes(QChart *chart, QDateTimeAxis *&x, QValueAxis *&y, const QString &timeFormat,
                 const QString &labelFormat) {
    x = new QDateTimeAxis(chart);
    x->setFormat(timeFormat);
    x->setTickCount(4); // four fit a narrow dock
    y = new QValueAxis(chart);
    y->setLabelFormat(labelFormat);
    y->setRange(0, 1);
    // Three ticks: five need more height than the dock usually gives and
    // Qt Charts then elides every label to "...".
    y->setTickCount(3);
    QFont small = y->labelsFont();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    x->setLabelsFont(small);
    y->setLabelsFont(small);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    const auto all = chart->series();
    for (QAbstractSeries *series : all) {
        series->attachAxis(x);
        series->attachAxis(y);
    }
}

double niceCeiling(double value) {
    if (value <= 0.0)
        return 1.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(value)));
    for (const double step : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (value <= step * magnitude)
            return step * magnitude;
    }
    return 10.0 * magnitude;
}

} // namespace outbox::console
