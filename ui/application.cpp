#include "application.h"

#include "main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>
#include <QImageReader>
#include <QSurfaceFormat>

#include <algorithm>

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

int runWorkstation(int argc, char** argv) {
    setDefaultSurfaceFormat();
    QApplication app(argc, argv);
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
    parser.addOption(demo);
    parser.addOption(demoSize);
    parser.process(app);

    MainWindow window;
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
        window.openDemo(spec);
    }
    return app.exec();
}

} // namespace tomo::ui
