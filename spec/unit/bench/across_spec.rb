# frozen_string_literal: true

require 'json'
require 'tmpdir'
require_relative '../../../bench/lib/clone_army_bench/across'

describe CloneArmyBench::Across do
  def result(dir, stamp, bench, figures)
    doc = { 'scale' => { 'bench' => bench }, 'figures' => figures.map do |key, value, target|
      { 'key' => key, 'label' => "label #{key}", 'value' => value, 'unit' => 's', 'target' => target, 'met' => nil, 'note' => '' }
    end }
    File.write(File.join(dir, "#{stamp.delete_suffix('.json')}.json"), JSON.generate(doc))
    File.join(dir, stamp)
  end

  it 'gives each figure every run had a number for, its runs in order and their median judged against its target' do
    Dir.mktmpdir do |dir|
      runs = [[0.2, 0.31, 40], [0.25, 0.29, 41], [0.22, 0.35, nil]].each_with_index.map do |(a, b, c), i|
        result(dir, "r#{i}", 'growth', [['grow_0', a, '≤ 0.3'], ['grow_900', b, '≤ 0.3'], ['base_apply', c, '–']])
      end
      rows = described_class.new(runs).rows
      expect(rows.map(&:key)).to eq(['grow_0', 'grow_900'])
      expect(rows.map(&:runs)).to eq([[0.2, 0.25, 0.22], [0.31, 0.29, 0.35]])
      expect(rows.map(&:median)).to eq([0.22, 0.31])
      expect(rows.map(&:met)).to eq([true, false])
    end
  end

  it 'keeps a whole count whole and writes the table with a column per run' do
    Dir.mktmpdir do |dir|
      runs = [5146, 5147, 5150].each_with_index.map { |v, i| result(dir, "r#{i}.json", 'growth', [['fleet_pss', v, '–']]) }
      across = described_class.new(runs)
      expect(across.rows.first.median).to eq(5147)
      expect(across.markdown).to eq("| figure | r0 | r1 | r2 | median | target | met |\n| --- | --- | --- | --- | --- | --- | --- |\n" \
                                    "| label fleet_pss (`fleet_pss`) | 5146 s | 5147 s | 5150 s | 5147 s | – | – |\n")
      expect(JSON.parse(across.json)['results']).to eq(['r0', 'r1', 'r2'])
    end
  end

  it 'refuses fewer runs than a median takes, and runs of different benches' do
    Dir.mktmpdir do |dir|
      runs = (0..2).map { |i| result(dir, "r#{i}", i.zero? ? 'fleet' : 'growth', [['k', 1, '–']]) }
      expect { described_class.new(runs.first(2)) }.to raise_error(ArgumentError, %r{at least 3 results, got 2})
      expect { described_class.new(runs) }.to raise_error(ArgumentError, %r{different benches \(fleet, growth\)})
    end
  end
end
