// The findings rules on hand-built reports: each rule fires on the figures it
// is about, stays quiet below its thresholds, takes its thresholds from the
// rules data, and the order puts alarming causes first.

#include "analyzer/findings/findings.h"

#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using report::Finding;
using report::Report;

// A run of 100 s with 100 steps of 1 s on a 4-CPU host, one trainer with
// two loaders; the stall figures are the test's to set.
Report Base(double stall_share = 0.05, double fetch = 0.5, double prep = 0.3, double other = 0.2) {
  Report r;
  r.mutable_run()->set_duration_s(100);
  r.mutable_run()->set_host_cpus(4);
  r.mutable_run()->set_io_busy_s(10);
  report::StepStatistics* st = r.mutable_step_statistics();
  st->set_steps(100);
  st->set_total_step_s(100);
  st->set_data_stall_share(stall_share);
  st->set_total_data_wait_s(100 * stall_share);
  st->set_median_data_wait_s(stall_share);
  st->set_fetch_share(fetch);
  st->set_prep_share(prep);
  st->set_other_share(other);
  for (int i = 0; i < 100; ++i) {
    report::Step* s = r.add_steps();
    s->set_step(i);
    s->set_duration_s(1);
    s->set_data_wait_s(stall_share);
    s->set_fetch_s(stall_share * fetch);
    s->set_prep_s(stall_share * prep);
    s->set_other_s(stall_share * other);
  }
  r.mutable_workers()->set_trainers(1);
  r.mutable_workers()->set_loaders(2);
  r.mutable_workers()->add_loaders_per_trainer(2);
  return r;
}

Report Analyzed(Report r, const rules::RuleSet* rules = nullptr) {
  absl::StatusOr<rules::RuleSet> defaults = DefaultRules();
  EXPECT_TRUE(defaults.ok()) << defaults.status();
  AddFindings(rules != nullptr ? *rules : *defaults, &r);
  return r;
}

const Finding* Find(const Report& r, const std::string& id) {
  for (const Finding& f : r.findings()) {
    if (f.id() == id) return &f;
  }
  return nullptr;
}

std::string Ids(const Report& r) {
  std::string out;
  for (const Finding& f : r.findings()) out += f.id() + " ";
  return out;
}

TEST(FindingsTest, TheBuiltInRulesParseAndEachHasWording) {
  absl::StatusOr<rules::RuleSet> rules = DefaultRules();
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_GE(rules->rule_size(), 17);
  for (const rules::Rule& rule : rules->rule()) {
    EXPECT_FALSE(rule.title().empty()) << rule.id();
    EXPECT_FALSE(rule.summary().empty()) << rule.id();
  }
}

TEST(FindingsTest, ACleanRunGetsTheVerdictWithItsOverlapFigure) {
  Report r = Base(0.04);
  r.mutable_overlap()->set_hidden_share(0.93);
  r.mutable_overlap()->set_hidden_io_s(9.3);
  r.mutable_overlap()->set_exposed_io_s(0.7);
  r = Analyzed(r);
  ASSERT_EQ(r.findings_size(), 1) << Ids(r);
  EXPECT_EQ(r.findings(0).id(), "no_bottleneck");
  EXPECT_EQ(r.findings(0).severity(), Finding::INFO);
  EXPECT_EQ(r.findings(0).summary(),
            "Training waited for data 4% of step time; 93% of the I/O (10.00 s) was hidden "
            "behind compute.");
}

TEST(FindingsTest, StallsAreNamedByTheirLargestPartWithSeverityByShare) {
  Report fetch = Analyzed(Base(0.40, 0.7, 0.2, 0.1));
  const Finding* f = Find(fetch, "data_stall_fetch");
  ASSERT_NE(f, nullptr) << Ids(fetch);
  EXPECT_EQ(f->severity(), Finding::CRITICAL);  // 40% >= 30%
  EXPECT_EQ(Find(fetch, "data_stall_prep"), nullptr);
  EXPECT_NE(f->summary().find("40% of step time (40.00 s over 100 steps)"), std::string::npos)
      << f->summary();

  Report prep = Analyzed(Base(0.15, 0.1, 0.6, 0.3));
  ASSERT_NE(Find(prep, "data_stall_prep"), nullptr) << Ids(prep);
  EXPECT_EQ(Find(prep, "data_stall_prep")->severity(), Finding::WARNING);  // 10% <= 15% < 30%
  Report other = Analyzed(Base(0.15, 0.1, 0.2, 0.7));
  ASSERT_NE(Find(other, "data_stall_other"), nullptr) << Ids(other);
  EXPECT_EQ(Find(Analyzed(Base(0.09, 0.7, 0.2, 0.1)), "data_stall_fetch"), nullptr);
}

TEST(FindingsTest, PreparationStallNamesTheTopPythonCostsAndAdvisesOnTheFirst) {
  Report r = Base(0.15, 0.1, 0.6, 0.3);
  Report unsampled = Analyzed(r);
  const Finding* plain = Find(unsampled, "data_stall_prep");
  ASSERT_NE(plain, nullptr);
  EXPECT_NE(plain->summary().find("computing (decoding, transforms); "), std::string::npos)
      << plain->summary();
  report::PyProfile* p = r.add_py_profiles();
  p->set_prep_cpu_s(10);
  auto cost = [&](const char* kind, const char* name, double share) {
    report::PyCost* c = p->add_prep_costs();
    c->set_kind(kind);
    c->set_name(name);
    c->set_share(share);
    c->set_cpu_s(10 * share);
  };
  cost("decoding", "PIL decoding (ImageFile.load)", 0.62);
  cost("transform", "RandomResizedCrop", 0.21);
  cost("collate", "collate_fn", 0.05);
  Report named = Analyzed(r);
  const Finding* f = Find(named, "data_stall_prep");
  ASSERT_NE(f, nullptr) << Ids(named);
  EXPECT_NE(f->summary().find("the loaders were computing: 62% in PIL decoding (ImageFile.load), "
                              "21% in RandomResizedCrop; "),
            std::string::npos)
      << f->summary();
  EXPECT_EQ(f->recommendation().rfind("Decoding costs most: decode at a lower resolution", 0), 0u)
      << f->recommendation();
  p->mutable_prep_costs()->SwapElements(0, 1);
  Report swapped = Analyzed(r);
  f = Find(swapped, "data_stall_prep");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->recommendation().rfind("The RandomResizedCrop transform costs most", 0), 0u)
      << f->recommendation();
}

TEST(FindingsTest, SlowStorageComesBeforeTheStallItCauses) {
  Report r = Base(0.30, 0.8, 0.1, 0.1);
  report::DataFiles* d = r.mutable_data_files();
  d->set_reads(2000);
  d->set_read_time_s(4);
  d->set_mean_read_latency_s(0.002);
  r = Analyzed(r);
  ASSERT_GE(r.findings_size(), 2) << Ids(r);
  EXPECT_EQ(r.findings(0).id(), "storage_slow");
  // Fetch seconds: 100 steps x 0.3 s x 0.8 = 24 s of 100 s of steps.
  EXPECT_EQ(r.findings(0).severity(), Finding::WARNING);
  EXPECT_EQ(r.findings(1).id(), "data_stall_fetch");

  // Fast reads without cache-bypassing: nothing about storage.
  Report fast = Base(0.30, 0.8, 0.1, 0.1);
  fast.mutable_data_files()->set_reads(2000);
  fast.mutable_data_files()->set_mean_read_latency_s(0.0001);
  EXPECT_EQ(Find(Analyzed(fast), "storage_slow"), nullptr);
  // The same fast reads after POSIX_FADV_DONTNEED: named, with the advice.
  fast.mutable_data_files()->set_dontneed_advice(8);
  Report evicted = Analyzed(fast);
  const Finding* f = Find(evicted, "storage_slow");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary().find("8 times (POSIX_FADV_DONTNEED)"), std::string::npos) << f->summary();
}

// Page faults that wait for storage: their own cause, before the stall,
// and storage_slow (advice for read calls) stands aside.
TEST(FindingsTest, MappedReadsFromStorageComeFirstWithMappingAdvice) {
  Report r = Base(0.30, 0.8, 0.1, 0.1);
  report::DataFiles* d = r.mutable_data_files();
  d->set_reads(3000);
  d->set_read_time_s(4);
  d->set_mean_read_latency_s(0.0013);
  report::Layer* mapped = r.add_layers();
  mapped->set_name("MAPPED");
  mapped->set_reads(3000);
  mapped->set_read_bytes(300.0 * 1024 * 1024);
  mapped->set_time_s(3);  // 75% of the data read time
  r = Analyzed(r);
  ASSERT_GE(r.findings_size(), 2) << Ids(r);
  EXPECT_EQ(r.findings(0).id(), "mapped_reads_storage");
  // 24 s of fetch (100 x 0.3 s x 0.8) x 75% = 18 s of 100 s of steps.
  EXPECT_EQ(r.findings(0).severity(), Finding::WARNING);
  EXPECT_EQ(r.findings(0).summary(),
            "Loaders read 300.0 MiB of memory-mapped data in 3000 page faults, which waited "
            "3.00 s for storage (75% of the data read time); training waited 18.00 s for data "
            "while loaders faulted.");
  EXPECT_NE(r.findings(0).recommendation().find("MADV_WILLNEED"), std::string::npos);
  EXPECT_EQ(Find(r, "storage_slow"), nullptr) << Ids(r);
  EXPECT_NE(Find(r, "data_stall_fetch"), nullptr) << Ids(r);

  // Faults that are a small part of the read time, or too little time: not
  // the cause.
  Report minor = Base(0.30, 0.8, 0.1, 0.1);
  minor.mutable_data_files()->set_read_time_s(4);
  minor.add_layers()->set_name("MAPPED");
  minor.mutable_layers(0)->set_time_s(1);  // 25%
  EXPECT_EQ(Find(Analyzed(minor), "mapped_reads_storage"), nullptr);
  minor.mutable_layers(0)->set_time_s(0.04);
  minor.mutable_data_files()->set_read_time_s(0.04);
  EXPECT_EQ(Find(Analyzed(minor), "mapped_reads_storage"), nullptr);
}

TEST(FindingsTest, HdfAmplificationNamesTheWorstDataset) {
  Report r = Base(0.2, 0.8, 0.1, 0.1);
  for (double calls_per : {1.0, 50.0}) {
    report::Dataset* d = r.add_datasets();
    d->set_file("/data/x.h5");
    d->set_name(calls_per > 1 ? "/images" : "/labels");
    d->set_layout("chunked");
    d->set_chunk_bytes(64);
    d->set_reads(1000);
    d->set_logical_bytes(1000 * 3072);
    d->set_posix_reads(1000 * calls_per);
    d->set_posix_bytes(1000 * 3072 * 1.2);
    d->set_reads_per_call(calls_per);
    d->set_byte_amplification(1.2);
    d->set_read_time_s(calls_per);
  }
  r = Analyzed(r);
  const Finding* f = Find(r, "hdf5_amplification");
  ASSERT_NE(f, nullptr) << Ids(r);
  EXPECT_EQ(r.findings(0).id(), "hdf5_amplification");
  ASSERT_EQ(f->objects_size(), 1);
  EXPECT_EQ(f->objects(0), "/data/x.h5:/images");
  EXPECT_NE(f->summary().find("became 50.0 POSIX reads"), std::string::npos) << f->summary();
}

TEST(FindingsTest, ManySmallFilesNeedsMetadataToDominate) {
  Report r = Base(0.3, 0.8, 0.1, 0.1);
  report::DataFiles* d = r.mutable_data_files();
  d->set_read_files(5000);
  d->set_median_file_bytes(852);
  d->set_metadata_ops(40000);
  d->set_metadata_s(8);
  d->set_read_time_s(2);
  Report many = Analyzed(r);
  const Finding* f = Find(many, "many_small_files");
  ASSERT_NE(f, nullptr) << Ids(many);
  EXPECT_NE(f->summary().find("5000 data files of 852 B each (median)"), std::string::npos)
      << f->summary();
  EXPECT_NE(f->summary().find("took 80% of the data I/O time"), std::string::npos) << f->summary();
  d->set_metadata_s(0.5);  // 20% of the I/O time
  EXPECT_EQ(Find(Analyzed(r), "many_small_files"), nullptr);
}

TEST(FindingsTest, TooFewWorkersOnlyWhenCoresAreIdle) {
  Report r = Base(0.5, 0.05, 0.9, 0.05);
  report::StepStatistics* st = r.mutable_step_statistics();
  r.mutable_workers()->set_loaders(1);
  r.mutable_workers()->set_loaders_per_trainer(0, 1);
  st->set_loader_cores(1.0);
  st->set_trainer_cores(0.2);
  Report idle = Analyzed(r);
  ASSERT_GT(idle.findings_size(), 0);
  EXPECT_EQ(idle.findings(0).id(), "too_few_workers") << Ids(idle);
  // 4 CPUs - 1.2 in use = 2.8 spare: 1 + 2 workers.
  EXPECT_NE(idle.findings(0).recommendation().find("num_workers=3"), std::string::npos)
      << idle.findings(0).recommendation();
  EXPECT_EQ(Find(idle, "cpu_starved_loaders"), nullptr);

  // The loaders waited for a CPU as long as they ran: the cores are taken.
  st->set_loader_run_queue_cores(1.0);
  Report starved = Analyzed(r);
  EXPECT_EQ(starved.findings(0).id(), "cpu_starved_loaders") << Ids(starved);
  EXPECT_EQ(Find(starved, "too_few_workers"), nullptr);
}

// num_workers=0: the trainer prepares every batch itself; the wording says
// so rather than "0 loader(s) ... 0.0 cores in use".
TEST(FindingsTest, TooFewWorkersWithoutWorkersSaysTheTrainerPreparesBatches) {
  Report r = Base(0.5, 0.05, 0.9, 0.05);
  r.mutable_workers()->set_loaders(0);
  r.mutable_workers()->set_loaders_per_trainer(0, 0);
  r.mutable_step_statistics()->set_trainer_cores(1.0);
  Report none = Analyzed(r);
  ASSERT_GT(none.findings_size(), 0);
  EXPECT_EQ(none.findings(0).id(), "too_few_workers") << Ids(none);
  EXPECT_EQ(none.findings(0).summary(),
            "The trainer prepares every batch itself (no DataLoader workers): it spent 90% of its "
            "waits for data computing (1.0 cores in use) while 3.0 of the 4 CPUs sat idle.");
  EXPECT_NE(none.findings(0).recommendation().find("num_workers=3"), std::string::npos)
      << none.findings(0).recommendation();
  const Finding* prep = Find(none, "data_stall_prep");
  ASSERT_NE(prep, nullptr) << Ids(none);
  EXPECT_NE(prep->summary().find("the trainer prepares every batch itself"), std::string::npos)
      << prep->summary();
}

TEST(FindingsTest, ImbalancedWorkersNeedsTimeAtStakeNotJustARatio) {
  Report r = Base(0.3, 0.8, 0.1, 0.1);
  r.mutable_workers()->set_max_over_mean_busy(2.0);
  r.mutable_workers()->set_excess_busy_s(0.01);  // a preempted call or two
  EXPECT_EQ(Find(Analyzed(r), "imbalanced_workers"), nullptr);
  r.mutable_workers()->set_excess_busy_s(5);
  Report fetch_bound = Analyzed(r);
  const Finding* f = Find(fetch_bound, "imbalanced_workers");
  ASSERT_NE(f, nullptr) << Ids(fetch_bound);
  EXPECT_EQ(f->severity(), Finding::WARNING);
  EXPECT_EQ(f->summary(), "The busiest loader spent 2.0x the mean loader's time in I/O (5.00 s more).");
  // Preparation-bound: the imbalance in I/O is not what the job waits for.
  Report prep = Base(0.3, 0.1, 0.8, 0.1);
  prep.mutable_workers()->set_max_over_mean_busy(2.0);
  prep.mutable_workers()->set_excess_busy_s(5);
  prep = Analyzed(prep);
  ASSERT_NE(Find(prep, "imbalanced_workers"), nullptr);
  EXPECT_EQ(Find(prep, "imbalanced_workers")->severity(), Finding::INFO);
}

TEST(FindingsTest, CheckpointStallIgnoresStepsThatOnlyLogALine) {
  Report r = Base(0.02);
  for (int i = 0; i < 100; ++i) {
    report::Step* s = r.mutable_steps(i);
    s->set_duration_s(0.1);
    s->set_write_busy_s(0.00005);  // a step log's line each step
    if (i % 25 == 10) {
      s->set_duration_s(0.5);
      s->set_write_busy_s(0.35);  // a checkpoint
    }
  }
  r.mutable_step_statistics()->set_total_step_s(96 * 0.1 + 4 * 0.5);
  Report with = Analyzed(r);
  const Finding* f = Find(with, "checkpoint_stall");
  ASSERT_NE(f, nullptr) << Ids(with);
  EXPECT_EQ(f->summary(),
            "4 steps in which the trainer wrote data took 500.0 ms (median) against 100.0 ms "
            "for the others; writing and flushing took 1.40 s in all.");
  for (int i = 0; i < 100; ++i) {
    if (i % 25 == 10) r.mutable_steps(i)->set_write_busy_s(0.00005);
  }
  EXPECT_EQ(Find(Analyzed(r), "checkpoint_stall"), nullptr);
}

TEST(FindingsTest, ThresholdsComeFromTheRulesData) {
  Report r = Base(0.15, 0.8, 0.1, 0.1);
  ASSERT_NE(Find(Analyzed(r), "data_stall_fetch"), nullptr);
  absl::StatusOr<rules::RuleSet> rules = DefaultRules();
  ASSERT_TRUE(rules.ok());
  for (rules::Rule& rule : *rules->mutable_rule()) {
    if (rule.id() == "data_stall_fetch") (*rule.mutable_threshold())["warning_share"] = 0.2;
  }
  EXPECT_EQ(Find(Analyzed(r, &*rules), "data_stall_fetch"), nullptr);
  for (rules::Rule& rule : *rules->mutable_rule()) {
    if (rule.id() == "data_stall_fetch") rule.set_disabled(true);
  }
  EXPECT_EQ(Find(Analyzed(Base(0.5, 0.8, 0.1, 0.1), &*rules), "data_stall_fetch"), nullptr);
}

}  // namespace
}  // namespace iotap::analyzer
