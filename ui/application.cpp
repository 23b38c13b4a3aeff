#include "application.h"

#include "main_window.h"
#include "panels/parameter_panel.h"
#include "work/latency_probe.h"

#include "tomo/registry.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>
#include <QImageReader>
#include <QSettings>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>

// Q_INIT_RESOURCE must be used outside any namespace.
static void initResources() { Q_INIT_RESOURCE(workstation); }

namespace tomo::ui {

void setDefaultSurfaceFormat() {
    QSurfaceFormat format;
    format.setRenderableType(QSurfaceFormat::OpenGL);
    format.setVersion(3, 2);
    format.setProfile(QSurfaceFormat::CoreProfile);
    format.setSwapBehavior(QSurfaceFormat::DoubleBuffer);
    format.setRedBufferSize(8);
    format.setGreenBufferSize(8);
    format.setBlueBufferSize(8);
    format.setAlphaBufferSize(8);
    format.setDepthBufferSize(24);
    format.setStencilBufferSize(0);
    format.setSamples(0);
    QSurfaceFormat::setDefaultFormat(format);
}

void initApplication() {
    initResources();
    QCoreApplication::setOrganizationName(QStringLiteral("TomoWorkstation"));
    QCoreApplication::setApplicationName(QStringLiteral("tomo-workstation"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TOMO_VERSION));
    QGuiApplication::setApplicationDisplayName(QStringLiteral("Tomo Workstation"));
    if (svgIconsAvailable()) QGuiApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/tomo-workstation.svg")));
}

bool svgIconsAvailable() { return QImageReader::supportedImageFormats().contains("svg"); }

namespace {

/// Empty when `name` is "auto" or a strategy that can run here, else why not.
QString strategyProblem(const QString& name) {
    if (name == QLatin1String("auto")) return {};
    const tomo::Backend* b = tomo::BackendRegistry::instance().find(name.toStdString());
    QStringList names{QStringLiteral("auto")};
    for (const tomo::Backend* other : tomo::BackendRegistry::instance().backends())
        names << QString::fromStdString(other->name());
    if (!b) return QStringLiteral("unknown strategy '%1' (this build has: %2)").arg(name, names.join(QStringLiteral(", ")));
    if (!b->unavailableReason().empty())
        return QStringLiteral("strategy '%1' is not available here: %2").arg(name, QString::fromStdString(b->unavailableReason()));
    return {};
}

} // namespace

int runWorkstation(int argc, char** argv) {
    setDefaultSurfaceFormat();
    TimedApplication app(argc, argv);
    initApplication();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Parallel-beam X-ray tomography workstation: live slice reconstruction, quality comparison, 3D view."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("input"),
                                 QStringLiteral("Dataset (DXchange/NXtomo HDF5, TIFF file or folder) or a "
                                                "parameter file (.json, as saved by File > Save Parameters); "
                                                "the demo phantom when omitted."),
                                 QStringLiteral("[input]"));
    QCommandLineOption demo(QStringLiteral("demo"), QStringLiteral("Open the demo phantom."));
    QCommandLineOption demoSize(QStringLiteral("demo-size"),
                                QStringLiteral("Detector columns (= projections) of the demo phantom (default 512)."),
                                QStringLiteral("n"), QStringLiteral("512"));
    QCommandLineOption demoRows(QStringLiteral("demo-rows"),
                                QStringLiteral("Detector rows (slices) of the demo phantom (default 64)."),
                                QStringLiteral("n"), QStringLiteral("64"));
    QCommandLineOption strategy(QStringLiteral("strategy"),
                                QStringLiteral("Back-projection strategy to start with: auto or a name of "
                                               "tomo-recon --list-strategies (default: the last one used)."),
                                QStringLiteral("name"));
    QCommandLineOption measure(QStringLiteral("measure-latency"),
                               QStringLiteral("Measure and exit: after the first slice, make n axis changes (each "
                                              "waited for), 4 row changes and a 30-step slider drag, with the "
                                              "Quality panel open; print one line 'MEASURED workstation-latency "
                                              "key=value ...' (change to image on screen, longest UI-thread "
                                              "stall, reference time) and exit with 0 (1 on a timeout or error). "
                                              "Uses fresh settings and leaves the user's untouched."),
                               QStringLiteral("n"));
    parser.addOption(demo);
    parser.addOption(demoSize);
    parser.addOption(demoRows);
    parser.addOption(strategy);
    parser.addOption(measure);
    parser.process(app);

    auto fail = [](const QString& message) {
        std::fprintf(stderr, "tomo-workstation: error: %s\n", qPrintable(message));
        return 2;
    };
    const bool measuring = parser.isSet(measure);
    bool countOk = true;
    const int changes = measuring ? parser.value(measure).toInt(&countOk) : 0;
    if (measuring && (!countOk || changes < 1)) return fail(QStringLiteral("--measure-latency %1: expected a count >= 1").arg(parser.value(measure)));
    if (parser.isSet(strategy)) {
        if (const QString problem = strategyProblem(parser.value(strategy)); !problem.isEmpty()) return fail(QStringLiteral("--strategy: ") % problem);
    }
    // A measurement starts from the defaults and leaves the user's settings alone.
    std::unique_ptr<QTemporaryDir> scratchSettings;
    if (measuring) {
        scratchSettings = std::make_unique<QTemporaryDir>();
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, scratchSettings->path());
    }

    MainWindow window;
    if (parser.isSet(strategy)) {
        SliceParams p = window.parameterPanel()->params();
        p.options.strategy = parser.value(strategy).toStdString();
        window.parameterPanel()->setParams(p);
    }
    window.show();
    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty() && !parser.isSet(demo)) {
        const QString input = args.first();
        if (QFileInfo(input).suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0)
            window.loadParameters(input);
        else
            window.openPath(input);
    } else {
        DemoSpec spec;
        spec.bins = spec.projections = std::clamp(parser.value(demoSize).toInt(), 16, 8192);
        spec.rows = std::clamp(parser.value(demoRows).toInt(), 1, 4096);
        window.openDemo(spec);
    }
    if (measuring) {
        LatencyProbeOptions options;
        options.axisChanges = changes;
        LatencyProbe probe(window, options);
        int code = 1;
        QTimer::singleShot(0, &app, [&] {
            code = probe.run();
            QCoreApplication::exit(code);
        });
        app.exec();
        return code;
    }
    return app.exec();
}

} // namespace tomo::ui
