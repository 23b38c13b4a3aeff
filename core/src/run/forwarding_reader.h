// A DatasetReader that hands every read to another one: the base of the
// preview session's readers, which keep some of what they read
// (RowBlockReader, GrowingRowsReader) and pass the rest on.
#pragma once

#include "tomo/dataset.h"
#include "tomo/error.h"

#include <memory>
#include <utility>

namespace tomo::preview {

class ForwardingReader : public DatasetReader {
public:
    /// Throws InvalidArgument for a null reader.
    explicit ForwardingReader(std::shared_ptr<DatasetReader> inner) { setInner(std::move(inner)); }

    void readSinograms(int firstRow, int rowCount, std::span<float> out) override {
        m_inner->readSinograms(firstRow, rowCount, out);
    }
    void readRawRows(int firstRow, int rowCount, std::span<std::byte> out) override {
        m_inner->readRawRows(firstRow, rowCount, out);
    }
    void readRawRowsOfProjections(int firstRow, int rowCount, int firstProjection, int projectionCount,
                                  std::span<std::byte> out) override {
        m_inner->readRawRowsOfProjections(firstRow, rowCount, firstProjection, projectionCount, out);
    }
    void prefetchRows(int firstRow, int rowCount) override { m_inner->prefetchRows(firstRow, rowCount); }
    bool readMeanFlat(int firstRow, int rowCount, std::span<float> out) override {
        return m_inner->readMeanFlat(firstRow, rowCount, out);
    }
    bool readMeanDark(int firstRow, int rowCount, std::span<float> out) override {
        return m_inner->readMeanDark(firstRow, rowCount, out);
    }
    void readProjection(int index, std::span<float> out) override { m_inner->readProjection(index, out); }
    void readFlatGroup(int group, int firstRow, int rowCount, std::span<float> out) override {
        m_inner->readFlatGroup(group, firstRow, rowCount, out);
    }

protected:
    /// Reads go to `inner` from now on, and info() is its info.
    void setInner(std::shared_ptr<DatasetReader> inner) {
        if (!inner) throw InvalidArgument("preview: no dataset");
        m_inner = std::move(inner);
        m_info = m_inner->info();
    }
    DatasetReader& inner() const { return *m_inner; }

private:
    std::shared_ptr<DatasetReader> m_inner;
};

} // namespace tomo::preview
