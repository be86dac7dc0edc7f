#pragma once

#include "consolebench.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QTextStream>

namespace outbox::consolebench {

// One line of the verdict: a figure, its target and whether it passed.
struct Check {
    QString figure;
    QString measured;
    QString target;
    bool pass = false;
};

// The targets, checked against one run's figures.
QList<Check> checkTargets(const BenchResults &results);

// Where and how the run happened (for the report and docs).
QJsonObject environment(const BenchOptions &options, const BenchResults &results);

void printHuman(QTextStream &out, const BenchOptions &options, const BenchResults &results);
QJsonObject toJson(const BenchOptions &options, const BenchResults &results);

} // namespace outbox::consolebench
