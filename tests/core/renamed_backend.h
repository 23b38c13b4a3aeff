// A registered backend under another name (and family), optionally failing
// to create plans like a GPU without memory: to give the autotuner other
// candidate sets in tests.
#pragma once

#include "tomo/backend.h"
#include "tomo/error.h"

#include <memory>
#include <string>
#include <utility>

namespace tomo::test {

class RenamedBackend final : public Backend {
public:
    RenamedBackend(std::string name, const Backend& inner, bool failsToPlan, std::string family = {})
        : m_name(std::move(name)), m_inner(inner), m_failsToPlan(failsToPlan), m_family(std::move(family)) {}
    std::string name() const override { return m_name; }
    std::string description() const override { return "test: " + m_inner.description(); }
    std::string family() const override { return m_family.empty() ? m_inner.family() : m_family; }
    std::string unavailableReason() const override { return {}; }
    void checkOptions(const ReconOptions& options) const override { m_inner.checkOptions(options); }
    std::unique_ptr<ReconstructionPlan> createPlan(const ReconGeometry& geometry,
                                                   const ReconOptions& options) const override {
        if (m_failsToPlan) throw OutOfMemory("test backend '" + m_name + "': no memory");
        return m_inner.createPlan(geometry, options);
    }

private:
    std::string m_name;
    const Backend& m_inner;
    bool m_failsToPlan;
    std::string m_family;
};

} // namespace tomo::test
