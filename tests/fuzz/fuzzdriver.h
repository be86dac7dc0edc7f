#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

#include <functional>

// A small deterministic mutation fuzzer for parsers (GCC has no libFuzzer).
// Inputs start from a seed corpus and are mutated (bit flips, byte inserts
// and deletes, interesting bytes, dictionary tokens, splices of two corpus
// entries); inputs a target accepts join the corpus, which stands in for
// coverage feedback. The random sequence is fixed by --seed, so a failure
// reproduces with the same command line.
namespace outbox::testing {

struct FuzzTarget {
    QString name;
    QList<QByteArray> seeds;
    QList<QByteArray> dictionary; // tokens worth inserting (keywords, separators)
    // Runs one input; returns an empty string when every property holds, or
    // a description of the violated one. Returns through `accepted` whether
    // the parser took the input as valid.
    std::function<QString(const QByteArray &input, bool &accepted)> run;
};

// Parses "<target> [--seconds S] [--iterations N] [--seed X]" (N = 0: no
// limit), runs the named target until either bound, prints
// "fuzz <name>: <n> inputs tried in <t> s, <a> accepted, corpus <c>", and
// returns 0, or 1 after printing the first input that broke a property.
int runFuzzer(const QList<FuzzTarget> &targets, const QStringList &arguments);

} // namespace outbox::testing
