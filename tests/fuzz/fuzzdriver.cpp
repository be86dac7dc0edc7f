#include "fuzzdriver.h"

#include <QElapsedTimer>
#include <QTextStream>

#include <cstdio>
#include <random>

namespace outbox::testing {

namespace {

constexpr qsizetype MaxInputBytes = 4096;
constexpr qsizetype MaxCorpus = 2000;

// Bytes that parsers treat specially.
constexpr char kInteresting[] = {'\0', '\x01', '\x7f', '\x80', '\xc3', '\xff', '\'', '"', '\\',
                                 '=',  ';',    ' ',    '\t',   '\n',   '\r',   ':',  '.', '-',
                                 '+',  '0',    '9',    '%',    '/',    '@',    '?',  '&'};

class Mutator {
public:
    explicit Mutator(quint64 seed)
        : m_rng(seed) {}

    qsizetype below(qsizetype n) {
        return n <= 0 ? 0 : qsizetype(std::uniform_int_distribution<qsizetype>(0, n - 1)(m_rng));
    }

    QByteArray mutate(QByteArray input, const QList<QByteArray> &corpus,
                      const QList<QByteArray> &dictionary) {
        const qsizetype rounds = 1 + below(4);
        for (qsizetype r = 0; r < rounds; ++r) {
            const qsizetype at = below(input.size() + 1);
            switch (below(8)) {
            case 0: // flip a bit
                if (!input.isEmpty()) {
                    const qsizetype i = below(input.size());
                    input[i] = char(input[i] ^ char(1 << below(8)));
                }
                break;
            case 1: // insert a random byte
                input.insert(at, char(below(256)));
                break;
            case 2: // delete a run
                if (!input.isEmpty())
                    input.remove(below(input.size()), 1 + below(8));
                break;
            case 3: // overwrite with an interesting byte
                if (!input.isEmpty())
                    input[below(input.size())] = kInteresting[below(sizeof kInteresting)];
                break;
            case 4: // insert an interesting byte
                input.insert(at, kInteresting[below(sizeof kInteresting)]);
                break;
            case 5: // insert a dictionary token
                if (!dictionary.isEmpty())
                    input.insert(at, dictionary.at(below(dictionary.size())));
                break;
            case 6: // duplicate a chunk
                if (!input.isEmpty()) {
                    const qsizetype from = below(input.size());
                    input.insert(at, input.mid(from, 1 + below(16)));
                }
                break;
            default: // splice with another corpus entry
                if (!corpus.isEmpty()) {
                    const QByteArray &other = corpus.at(below(corpus.size()));
                    input = input.left(at) + other.mid(below(other.size() + 1));
                }
                break;
            }
        }
        return input.left(MaxInputBytes);
    }

private:
    std::mt19937_64 m_rng;
};

QString printable(const QByteArray &input) {
    QString text;
    for (char c : input) {
        const auto byte = uchar(c);
        if (byte >= 0x20 && byte < 0x7f && byte != '\\')
            text += QLatin1Char(c);
        else
            text += QStringLiteral("\\x%1").arg(byte, 2, 16, QLatin1Char('0'));
    }
    return text;
}

} // namespace

int runFuzzer(const QList<FuzzTarget> &targets, const QStringList &arguments) {
    QTextStream out(stdout);
    QTextStream err(stderr);
    const auto usage = [&] {
        err << "usage: fuzz_parsers <target> [--seconds S] [--iterations N] [--seed X]\n"
            << "targets:";
        for (const FuzzTarget &target : targets)
            err << ' ' << target.name;
        err << '\n';
        return 2;
    };
    if (arguments.isEmpty())
        return usage();
    const FuzzTarget *target = nullptr;
    for (const FuzzTarget &candidate : targets) {
        if (candidate.name == arguments.first())
            target = &candidate;
    }
    if (!target)
        return usage();
    double seconds = 3;
    qint64 iterations = 0;
    quint64 seed = 20261126;
    for (qsizetype i = 1; i + 1 < arguments.size(); i += 2) {
        bool ok = false;
        if (arguments.at(i) == QLatin1String("--seconds"))
            seconds = arguments.at(i + 1).toDouble(&ok);
        else if (arguments.at(i) == QLatin1String("--iterations"))
            iterations = arguments.at(i + 1).toLongLong(&ok);
        else if (arguments.at(i) == QLatin1String("--seed"))
            seed = arguments.at(i + 1).toULongLong(&ok);
        if (!ok)
            return usage();
    }

    Mutator mutator(seed);
    QList<QByteArray> corpus = target->seeds;
    qint64 tried = 0;
    qint64 accepted = 0;
    const auto check = [&](const QByteArray &input) {
        bool ok = false;
        const QString violation = target->run(input, ok);
        ++tried;
        if (!violation.isEmpty()) {
            err << "fuzz " << target->name << ": property violated after " << tried
                << " inputs: " << violation << "\n  input: \"" << printable(input) << "\"\n";
            return false;
        }
        if (ok) {
            ++accepted;
            if (corpus.size() < MaxCorpus && !corpus.contains(input))
                corpus.append(input);
        }
        return true;
    };

    QElapsedTimer clock;
    clock.start();
    for (const QByteArray &seedInput : target->seeds) {
        if (!check(seedInput))
            return 1;
    }
    while ((iterations == 0 || tried < iterations) && clock.elapsed() < qint64(seconds * 1000)) {
        const QByteArray &base = corpus.at(mutator.below(corpus.size()));
        if (!check(mutator.mutate(base, corpus, target->dictionary)))
            return 1;
    }
    out << "fuzz " << target->name << ": " << tried << " inputs tried in "
        << QString::number(double(clock.elapsed()) / 1000.0, 'f', 1) << " s, " << accepted
        << " accepted, corpus " << corpus.size() << " (seed " << seed << ")\n";
    return 0;
}

} // namespace outbox::testing
