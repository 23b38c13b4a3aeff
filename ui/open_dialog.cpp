#include "open_dialog.h"

#include "ui_open_dialog.h"

#include <QFileDialog>
#include <QPushButton>

namespace tomo::ui {

OpenDialog::OpenDialog(const QString& directory, QWidget* parent)
    : QDialog(parent), ui(std::make_unique<Ui::OpenDialog>()), m_directory(directory) {
    ui->setupUi(this);
    for (auto t : {tomo::SampleType::UInt16, tomo::SampleType::Float32, tomo::SampleType::UInt8, tomo::SampleType::Float64})
        ui->typeCombo->addItem(QString::fromUtf8(tomo::sampleTypeName(t)), static_cast<int>(t));
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
    connect(ui->pathEdit, &QLineEdit::textChanged, this,
            [this](const QString& t) { ui->buttonBox->button(QDialogButtonBox::Open)->setEnabled(!t.trimmed().isEmpty()); });
    connect(ui->buttonBox, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(ui->buttonBox, &QDialogButtonBox::rejected, this, &QDialog::reject);
    ui->buttonBox->button(QDialogButtonBox::Open)->setEnabled(false);
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
    o.angleRangeDegrees = ui->rangeSpin->value();
    return o;
}

} // namespace tomo::ui
