#include "dialogs/open_dialog.h"

#include "ui_open_dialog.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QPushButton>
#include <QSettings>

#include <algorithm>

namespace tomo::ui {

namespace {

const QString kGroup = QStringLiteral("openDialog/");

} // namespace

OpenDialog::OpenDialog(const QString& directory, QWidget* parent)
    : QDialog(parent), ui(std::make_unique<Ui::OpenDialog>()), m_directory(directory) {
    ui->setupUi(this);
    for (auto t : {tomo::SampleType::UInt16, tomo::SampleType::Float32, tomo::SampleType::UInt8, tomo::SampleType::Float64})
        ui->typeCombo->addItem(QString::fromUtf8(tomo::sampleTypeName(t)), static_cast<int>(t));
    ui->unitsCombo->addItem(tr("automatic (as the file says)"), static_cast<int>(tomo::AngleUnits::Auto));
    ui->unitsCombo->addItem(tr("degrees"), static_cast<int>(tomo::AngleUnits::Degrees));
    ui->unitsCombo->addItem(tr("radians"), static_cast<int>(tomo::AngleUnits::Radians));
    connect(ui->unitsCombo, &QComboBox::currentIndexChanged, this, &OpenDialog::updateAnglesHint);
    connect(ui->fileButton, &QToolButton::clicked, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Dataset file"), m_directory);
        if (!p.isEmpty()) setPath(p);
    });
    connect(ui->folderButton, &QToolButton::clicked, this, [this] {
        const QString p = QFileDialog::getExistingDirectory(this, tr("Folder of TIFF projections"), m_directory);
        if (!p.isEmpty()) setPath(p);
    });
    connect(ui->anglesButton, &QToolButton::clicked, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Angles file (degrees)"), m_directory,
                                                       tr("Text files (*.txt *.dat *.csv);;All files (*)"));
        if (!p.isEmpty()) ui->anglesEdit->setText(p);
    });
    connect(ui->pathEdit, &QLineEdit::textChanged, this, [this](const QString& t) {
        ui->buttonBox->button(QDialogButtonBox::Open)->setEnabled(!t.trimmed().isEmpty());
        updateAnglesHint();
    });
    connect(ui->anglesEdit, &QLineEdit::textChanged, this, &OpenDialog::updateAnglesHint);
    connect(ui->linesCheck, &QCheckBox::toggled, this, [this](bool on) {
        ui->firstLineSpin->setEnabled(on);
        ui->lastLineSpin->setEnabled(on);
        updateAnglesHint();
    });
    for (QSpinBox* s : {ui->firstLineSpin, ui->lastLineSpin})
        connect(s, &QSpinBox::valueChanged, this, &OpenDialog::updateAnglesHint);
    connect(ui->buttonBox, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(ui->buttonBox, &QDialogButtonBox::rejected, this, &QDialog::reject);
    ui->buttonBox->button(QDialogButtonBox::Open)->setEnabled(false);

    // What was typed last time.
    const QSettings s;
    setPath(s.value(kGroup % QStringLiteral("path")).toString());
    tomo::OpenOptions last;
    if (const QString angles = s.value(kGroup % QStringLiteral("anglesFile")).toString(); !angles.isEmpty())
        last.anglesFile = angles.toStdString();
    if (s.value(kGroup % QStringLiteral("linesOn"), false).toBool())
        last.anglesLines = tomo::LineRange{s.value(kGroup % QStringLiteral("firstLine")).toInt(),
                                           s.value(kGroup % QStringLiteral("lineCount")).toInt()};
    last.angleRangeDegrees = s.value(kGroup % QStringLiteral("angleRange"), 180.0).toDouble();
    last.angleUnits = static_cast<tomo::AngleUnits>(
        std::clamp(s.value(kGroup % QStringLiteral("angleUnits"), 0).toInt(), 0, 2));
    if (s.value(kGroup % QStringLiteral("rawOn"), false).toBool())
        last.raw = tomo::RawLayout{s.value(kGroup % QStringLiteral("rawProjections"), 180).toInt(),
                                   s.value(kGroup % QStringLiteral("rawRows"), 1).toInt(),
                                   s.value(kGroup % QStringLiteral("rawColumns"), 512).toInt(),
                                   static_cast<tomo::SampleType>(s.value(kGroup % QStringLiteral("rawType"), 0).toInt()),
                                   s.value(kGroup % QStringLiteral("rawHeader"), 0).toULongLong(),
                                   s.value(kGroup % QStringLiteral("rawBigEndian"), false).toBool()};
    setOptions(last);
}

OpenDialog::~OpenDialog() = default;

QString OpenDialog::path() const { return ui->pathEdit->text().trimmed(); }
void OpenDialog::setPath(const QString& path) { ui->pathEdit->setText(path); }

tomo::OpenOptions OpenDialog::options() const {
    tomo::OpenOptions o;
    if (ui->rawGroup->isChecked()) {
        tomo::RawLayout raw;
        raw.projections = ui->projectionsSpin->value();
        raw.rows = ui->rowsSpin->value();
        raw.columns = ui->columnsSpin->value();
        raw.type = static_cast<tomo::SampleType>(ui->typeCombo->currentData().toInt());
        raw.headerBytes = static_cast<std::size_t>(ui->headerSpin->value());
        raw.bigEndian = ui->bigEndianCheck->isChecked();
        o.raw = raw;
    }
    if (!ui->anglesEdit->text().trimmed().isEmpty()) o.anglesFile = ui->anglesEdit->text().trimmed().toStdString();
    if (ui->linesCheck->isChecked())
        o.anglesLines = tomo::LineRange{ui->firstLineSpin->value(),
                                        std::max(1, ui->lastLineSpin->value() - ui->firstLineSpin->value() + 1)};
    o.angleRangeDegrees = ui->rangeSpin->value();
    o.angleUnits = static_cast<tomo::AngleUnits>(ui->unitsCombo->currentData().toInt());
    return o;
}

void OpenDialog::setOptions(const tomo::OpenOptions& o) {
    ui->anglesEdit->setText(o.anglesFile ? QString::fromStdString(o.anglesFile->string()) : QString());
    ui->linesCheck->setChecked(o.anglesLines.has_value());
    ui->firstLineSpin->setEnabled(o.anglesLines.has_value());
    ui->lastLineSpin->setEnabled(o.anglesLines.has_value());
    if (o.anglesLines) {
        ui->firstLineSpin->setValue(o.anglesLines->first);
        ui->lastLineSpin->setValue(o.anglesLines->first + std::max(1, o.anglesLines->count) - 1);
    }
    ui->rangeSpin->setValue(o.angleRangeDegrees);
    ui->unitsCombo->setCurrentIndex(std::max(0, ui->unitsCombo->findData(static_cast<int>(o.angleUnits))));
    ui->rawGroup->setChecked(o.raw.has_value());
    if (o.raw) {
        ui->projectionsSpin->setValue(o.raw->projections);
        ui->rowsSpin->setValue(o.raw->rows);
        ui->columnsSpin->setValue(o.raw->columns);
        ui->typeCombo->setCurrentIndex(std::max(0, ui->typeCombo->findData(static_cast<int>(o.raw->type))));
        ui->headerSpin->setValue(static_cast<int>(o.raw->headerBytes));
        ui->bigEndianCheck->setChecked(o.raw->bigEndian);
    }
    updateAnglesHint();
}

void OpenDialog::accept() {
    QSettings s;
    const tomo::OpenOptions o = options();
    s.setValue(kGroup % QStringLiteral("path"), path());
    s.setValue(kGroup % QStringLiteral("anglesFile"), ui->anglesEdit->text().trimmed());
    s.setValue(kGroup % QStringLiteral("linesOn"), o.anglesLines.has_value());
    s.setValue(kGroup % QStringLiteral("firstLine"), o.anglesLines ? o.anglesLines->first : 0);
    s.setValue(kGroup % QStringLiteral("lineCount"), o.anglesLines ? o.anglesLines->count : 0);
    s.setValue(kGroup % QStringLiteral("angleRange"), o.angleRangeDegrees);
    s.setValue(kGroup % QStringLiteral("angleUnits"), static_cast<int>(o.angleUnits));
    s.setValue(kGroup % QStringLiteral("rawOn"), o.raw.has_value());
    if (o.raw) {
        s.setValue(kGroup % QStringLiteral("rawProjections"), o.raw->projections);
        s.setValue(kGroup % QStringLiteral("rawRows"), o.raw->rows);
        s.setValue(kGroup % QStringLiteral("rawColumns"), o.raw->columns);
        s.setValue(kGroup % QStringLiteral("rawType"), static_cast<int>(o.raw->type));
        s.setValue(kGroup % QStringLiteral("rawHeader"), static_cast<qulonglong>(o.raw->headerBytes));
        s.setValue(kGroup % QStringLiteral("rawBigEndian"), o.raw->bigEndian);
    }
    QDialog::accept();
}

void OpenDialog::updateAnglesHint() {
    // The angles file named, or a TIFF folder's own angles.txt.
    QString file = ui->anglesEdit->text().trimmed();
    if (file.isEmpty() && QFileInfo(path()).isDir() && QFileInfo::exists(QDir(path()).filePath(QStringLiteral("angles.txt"))))
        file = QDir(path()).filePath(QStringLiteral("angles.txt"));
    if (file.isEmpty()) {
        ui->anglesHint->setText(ui->linesCheck->isChecked() ? tr("Entries need an angles file.") : QString());
        return;
    }
    try {
        const tomo::OpenOptions o = options();
        const tomo::AngleUnits units =
            o.angleUnits == tomo::AngleUnits::Radians ? tomo::AngleUnits::Radians : tomo::AngleUnits::Degrees;
        const auto all = tomo::readAnglesFile(file.toStdString(), units);
        QString text = tr("%1: %2 angles (entries 0–%3).").arg(QFileInfo(file).fileName()).arg(all.size()).arg(all.size() - 1);
        if (ui->linesCheck->isChecked()) {
            const auto used = tomo::readAnglesFile(file.toStdString(), units, o.anglesLines);
            text += QLatin1Char(' ') % tr("Entries %1–%2: %3 angles, used as the projections' angles.")
                                          .arg(o.anglesLines->first)
                                          .arg(o.anglesLines->first + static_cast<int>(used.size()) - 1)
                                          .arg(used.size());
        } else {
            text += QLatin1Char(' ') % tr("When it lists more frames than there are projections, dark and flat "
                                          "frames at the first and last angle are recognised on opening.");
        }
        ui->anglesHint->setText(text);
    } catch (const std::exception& e) {
        ui->anglesHint->setText(QString::fromUtf8(e.what()));
    }
}

} // namespace tomo::ui
