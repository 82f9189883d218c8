# frozen_string_literal: true

require_relative 'batch'
require_relative 'memory'
require_relative 'results'
require_relative 'stats'

module CloneArmyBench
  # BENCH=growth: the fleet made GROW_BATCH clones at a time up to CLONES, each
  # batch beside the ones before, its seconds per clone a figure; flat when the
  # line fitted through every batch stays within Batch::TARGET at its highest
  # (the last batch's over the first's is shown too). Growing stops at a batch
  # that did not all boot.
  class Growth
    # The last batch's seconds per clone over the first's.
    FLAT_TARGET = 1.5

    def initialize(bench)
      @bench = bench
      @s = bench.settings
    end

    def run
      @bench.record.meta('grow_batch', @s.grow_batch)
      @bench.record.meta('grow_runinterval', @s.grow_runinterval)
      mem0 = Memory.used_kib
      batches = grow
      last, outcome = batches.last
      flat(batches, last, outcome)
      slope(batches)
      Memory.figures(@bench, mem0, last)
    end

    # The line fitted through the batches (seconds per clone over clones running
    # before each): its growth per 1000 running, and its value at its highest batch,
    # judged against Batch::TARGET (met only when every batch booted). Shared by
    # the bench and by derive, which adds them to results older than they are.
    def self.fit_figures(running, secs, all_booted:)
      slope = Stats.slope(running, secs)
      fitted = Stats.fitted_max(running, secs)
      fitted &&= Float(Stats.fixed(fitted))
      note = "batches at #{running.join(' ')} running: #{secs.join(' ')} s"
      per_thousand = slope && Float(Stats.fixed(Float(Stats.fixed(slope, 9)) * 1000))
      met = all_booted && !fitted.nil? && fitted <= Batch::TARGET
      [Results.figure(key: 'grow_slope', value: per_thousand, unit: 's', target: '–', met: nil, note: note,
                      label: "seconds per clone, fitted growth per 1000 clones running (least squares over #{secs.size} batches)"),
       Results.figure(key: 'grow_fitted_max', label: 'seconds per clone, the fitted line at its highest batch', value: fitted,
                      unit: 's', target: "≤ #{Batch::TARGET}", met: met, note: note)]
    end

    private

    # [last clone, Outcome, running before] of each batch made.
    def grow
      made = []
      @s.batches.each do |first, last|
        outcome = Batch.new(@bench, first, last, @s.grow_runinterval).run
        @bench.fig("grow_#{first - 1}", "seconds per clone created and booted (#{outcome.clones} new clones, #{first - 1} running)",
                   outcome.secs,
                   unit: 's', target: "≤ #{Batch::TARGET}", met: outcome.met, note: outcome.note)
        made << [last, outcome, first - 1]
        next if outcome.ok

        @bench.log("not every clone of clone#{first}..clone#{last} runs and booted: the fleet grows no further")
        break
      end
      made
    end

    def flat(batches, last, outcome)
      first_secs = batches.first[1].secs
      ratio = Float(Stats.fixed(outcome.secs / first_secs))
      met = outcome.ok && last == @s.clones && @bench.met_le(ratio, FLAT_TARGET)
      @bench.fig('grow_flat', "seconds per clone, last batch / first batch (clone#{last} running)", ratio,
                 unit: '', target: "≤ #{FLAT_TARGET}", met: met,
                 note: "#{Stats.fixed(first_secs)} s with none running, #{Stats.fixed(outcome.secs)} s in the last batch")
    end

    # The trend over every batch, not only its ends.
    def slope(batches)
      running = batches.map { |b| b[2] }
      secs = batches.map { |b| Stats.fixed(b[1].secs) }
      Growth.fit_figures(running, secs, all_booted: batches.last[1].ok).each do |f|
        @bench.fig(f['key'], f['label'], f['value'], unit: f['unit'], target: f['target'], met: f['met'], note: f['note'])
      end
    end
  end
end
